import { Cron as Croner } from 'croner';

/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week) read and stepped by croner,
 * a maintained library, in the schedule's IANA time zone. What this file adds: refusals that name the
 * field and why (croner's own messages name neither the field's position nor, for day of month and
 * month, the value the user wrote: it reports them zero-based), and the options that keep crontab's
 * reading. croner also reads a few extensions crontab does not (L, W, #, ?, +); they are harmless.
 *
 * Options, and why:
 * - mode '5-part': a sixth field would be seconds (croner's default reads 5, 6 or 7 parts); schedules
 *   run at most every 5 minutes, so seconds are refused.
 * - sloppyRanges: "5/15" means from 5 to the end by 15, as crontab reads it (croner refuses it by default).
 * - Day of month and day of week both restricted match a day that satisfies either, as crontab: croner's
 *   default (domAndDow false).
 * - fixedTimeRule 'no-wildcard', for daylight-saving changes. croner follows Vixie cron: a fixed-time
 *   job (no `*` or step in minute and hour) whose wall time the zone skips runs at the first valid time
 *   after the gap, the same day (daily 02:00 or 02:30 Europe/Berlin on 28 March 2027 runs at 03:00
 *   CEST); a wall time the zone repeats runs once, at its first occurrence (02:00 on 31 October 2027 is
 *   02:00 CEST only). An interval job (`*` or a step, such as every 30 minutes) skips the missing hour
 *   and runs through the repeated one twice, keeping its real-time spacing. croner's default would
 *   also treat a list such as "30 2,14 * * *" as an interval job and drop its 02:30 run on the
 *   spring-forward day; 'no-wildcard' counts lists and single values alike as fixed times, so a job
 *   naming its hours never silently loses a run.
 */
export type Cron = Croner;

export class CronError extends Error {
  override name = 'CronError';
}

const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
] as const;

function croner(pattern: string, zone: string): Croner {
  // No callback: croner only computes runs, it starts no timer.
  return new Croner(pattern, { timezone: zone, mode: '5-part', sloppyRanges: true, fixedTimeRule: 'no-wildcard' });
}

/** croner's message without its "CronPattern: " prefix and final full stop. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^CronPattern:\s*/, '').replace(/\.$/, '');
}

/** The first number written in the field outside its range (steps are not values), if any. */
function outOfRange(text: string, field: (typeof FIELDS)[number]): number | null {
  for (const part of text.split(',')) {
    for (const token of part.split('/')[0]!.split('-')) {
      if (!/^\d+$/.test(token)) continue;
      const n = Number(token);
      if (n < field.min || n > field.max) return n;
    }
  }
  return null;
}

/** Why croner refuses one field, tried alone with every other field `*`; null when it accepts it. */
function fieldError(parts: readonly string[], index: number): string | null {
  const alone = FIELDS.map((_, i) => (i === index ? parts[i]! : '*')).join(' ');
  try {
    croner(alone, 'UTC');
    return null;
  } catch (error) {
    const field = FIELDS[index]!;
    const n = error instanceof RangeError ? outOfRange(parts[index]!, field) : null;
    const reason = n === null ? reasonOf(error) : `${n} is outside ${field.min}-${field.max}`;
    return `field ${index + 1} (${field.name}) "${parts[index]}": ${reason}`;
  }
}

/** Reads the expression for the zone (an IANA name, already checked), or throws a CronError saying why not. */
export function parseCron(expression: string, zone = 'UTC'): Cron {
  const text = expression.trim();
  if (text.startsWith('@')) {
    try {
      return croner(text, zone);
    } catch {
      // croner's reason here is its field count ("five, six, or seven parts"), or for @reboot that it
      // cannot detect a start-up: neither helps someone who wrote "@every 5m".
      throw new CronError(`unknown shorthand "${text}": use @yearly, @monthly, @weekly, @daily or @hourly`);
    }
  }
  const parts = text.split(/\s+/).filter(Boolean);
  if (parts.length !== 5) {
    throw new CronError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}${parts.length === 6 ? ': seconds are not supported' : ''}`);
  }
  try {
    return croner(parts.join(' '), zone);
  } catch (error) {
    for (let i = 0; i < parts.length; i++) {
      const message = fieldError(parts, i);
      if (message !== null) throw new CronError(message);
    }
    throw new CronError(reasonOf(error));
  }
}

/**
 * The first run strictly after `after`, in the zone the expression was read for, or null when none
 * ever comes (30 February).
 */
export function nextCronRun(cron: Cron, after: Date): Date | null {
  return cron.nextRun(after);
}
