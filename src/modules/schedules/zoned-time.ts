/**
 * Wall-clock time in an IANA time zone with nothing but Intl (no time-zone library is a dependency):
 * a schedule's "02:00 Europe/Berlin" has to become an instant on each day, across DST changes.
 */

export interface WallTime {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

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

/** The wall time of an instant in the zone (seconds dropped). */
export function wallTimeOf(instant: number, zone: string): WallTime {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal' && p.type !== 'dayPeriod' && p.type !== 'era') parts[p.type] = Number(p.value);
  }
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute! };
}

/** The wall time's fields read as if UTC, in ms: what offsets are measured against. */
function asUtc(w: WallTime): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute);
}

/** The zone's UTC offset at an instant, in ms (to the minute). */
function offsetAt(instant: number, zone: string): number {
  const floored = Math.floor(instant / 60_000) * 60_000;
  return asUtc(wallTimeOf(floored, zone)) - floored;
}

/**
 * The instant a wall time names in the zone. A time that occurs twice (clocks set back) is its
 * earlier occurrence; a time that does not exist (clocks set forward) moves forward by the gap, so
 * 02:30 on the day Berlin skips 02:00-03:00 is 03:30 CEST. That is what Temporal calls "compatible".
 */
export function instantOf(w: WallTime, zone: string): number {
  const wall = asUtc(w);
  // Zones change offset at most once within a day around any instant the tz database knows.
  const before = offsetAt(wall - 86_400_000, zone);
  const after = offsetAt(wall + 86_400_000, zone);
  const valid = [wall - before, wall - after].filter((c) => c + offsetAt(c, zone) === wall);
  if (valid.length > 0) return Math.min(...valid);
  return wall - before;
}
