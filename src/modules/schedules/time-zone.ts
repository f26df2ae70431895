/**
 * Which time-zone names a schedule may use. croner does the wall-clock arithmetic in the zone (see
 * cron.ts); this only checks the name first, so an unknown one is a 400 naming time_zone rather than an
 * error from deep inside croner, and stores the runtime's canonical spelling.
 */

// Region/City names as the tz database spells them, or UTC and its aliases; Intl also accepts offsets
// such as "+01:00", which follow no DST rules and are not time zones a schedule should name.
const ZONE_NAME = /^(?:[A-Za-z][A-Za-z0-9_+-]*)(?:\/[A-Za-z0-9_+-]+)*$/;

/** The zone's canonical IANA name, or null for a name Intl (the runtime's tz database) does not know. */
export function canonicalTimeZone(name: string): string | null {
  if (name.length > 64 || !ZONE_NAME.test(name)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}
