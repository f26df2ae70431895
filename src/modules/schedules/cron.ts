import { lookupTable } from '../../platform/lookup-table.js';
import { instantOf, wallTimeOf } from './zoned-time.js';

/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week), as crontab(5) reads
 * them: `*`, lists, ranges, steps (`1-5/2`, or a star, slash and 15 for every 15 minutes), month and weekday names, 7 for Sunday, and the
 * @hourly/@daily/@weekly/@monthly/@yearly shorthands. No cron library is a dependency and the job
 * queue's schedules are fixed intervals, so this is the service's own. Like crontab, a day-of-month
 * and a day-of-week that are both restricted match a day that satisfies either.
 */
export interface Cron {
  minutes: readonly number[];
  hours: readonly number[];
  days: ReadonlySet<number>;
  months: ReadonlySet<number>;
  weekdays: ReadonlySet<number>;
  /** Day-of-month and day-of-week were each `*` (or started with it): the other one alone decides. */
  anyDay: boolean;
  anyWeekday: boolean;
}

export class CronError extends Error {
  override name = 'CronError';
}

const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] },
  { name: 'day of week', min: 0, max: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
] as const;

const SHORTHANDS = lookupTable<string>({
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
});

function parseField(text: string, index: number): Set<number> {
  const field = FIELDS[index]!;
  const where = `field ${index + 1} (${field.name}) "${text}"`;
  const value = (token: string): number => {
    const named = 'names' in field ? (field.names as readonly string[]).indexOf(token.toLowerCase()) : -1;
    if (named >= 0) return named + (field.name === 'month' ? 1 : 0);
    if (!/^\d{1,2}$/.test(token)) throw new CronError(`${where}: "${token}" is not a number${'names' in field ? ' or a name' : ''}`);
    const n = Number(token);
    if (n < field.min || n > field.max) throw new CronError(`${where}: ${n} is outside ${field.min}-${field.max}`);
    return n;
  };
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const match = /^([^/]+)(?:\/(\d{1,2}))?$/.exec(part);
    if (!match) throw new CronError(`${where}: "${part}" is not a value, range or step`);
    const [, range, stepText] = match;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) throw new CronError(`${where}: a step must be at least 1`);
    let lo: number;
    let hi: number;
    if (range === '*') {
      [lo, hi] = [field.min, field.name === 'day of week' ? 6 : field.max];
    } else if (range!.includes('-')) {
      const [a, b, ...rest] = range!.split('-');
      if (rest.length || !a || !b) throw new CronError(`${where}: "${range}" is not a range`);
      [lo, hi] = [value(a), value(b)];
      if (lo > hi) throw new CronError(`${where}: the range ${a}-${b} runs backwards`);
    } else {
      lo = value(range!);
      // "5/15" means from 5 to the end by 15, as in crontab.
      hi = stepText === undefined ? lo : field.max;
    }
    for (let n = lo; n <= hi; n += step) out.add(field.name === 'day of week' && n === 7 ? 0 : n);
  }
  return out;
}

export function parseCron(expression: string): Cron {
  const trimmed = expression.trim();
  const text = SHORTHANDS[trimmed.toLowerCase()] ?? trimmed;
  if (text.startsWith('@')) throw new CronError(`unknown shorthand "${trimmed}": use @yearly, @monthly, @weekly, @daily or @hourly`);
  const parts = text.split(/\s+/).filter(Boolean);
  if (parts.length !== 5) {
    throw new CronError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}${parts.length === 6 ? ': seconds are not supported' : ''}`);
  }
  const sets = parts.map((p, i) => parseField(p, i));
  return {
    minutes: [...sets[0]!].sort((a, b) => a - b),
    hours: [...sets[1]!].sort((a, b) => a - b),
    days: sets[2]!,
    months: sets[3]!,
    weekdays: sets[4]!,
    anyDay: parts[2]!.startsWith('*'),
    anyWeekday: parts[4]!.startsWith('*'),
  };
}

function dayMatches(cron: Cron, year: number, month: number, day: number): boolean {
  if (!cron.months.has(month)) return false;
  const byDay = cron.days.has(day);
  const byWeekday = cron.weekdays.has(new Date(Date.UTC(year, month - 1, day)).getUTCDay());
  if (cron.anyDay && cron.anyWeekday) return true;
  if (cron.anyDay) return byWeekday;
  if (cron.anyWeekday) return byDay;
  return byDay || byWeekday;
}

/** Far enough for "0 0 29 2 1" (29 February on a Monday), which can be 28 years away. */
const MAX_DAYS = 366 * 29;

/**
 * The first instant strictly after `after` whose wall time in the zone the expression matches, or
 * null when none falls within 29 years (30 February). A wall time the zone skips runs when its
 * clocks have moved on (see instantOf); one it repeats runs once, at its first occurrence.
 */
export function nextCronRun(cron: Cron, zone: string, after: Date): Date | null {
  const from = after.getTime();
  const start = wallTimeOf(from, zone);
  for (let offset = 0; offset < MAX_DAYS; offset++) {
    const date = new Date(Date.UTC(start.year, start.month - 1, start.day + offset));
    const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    if (!dayMatches(cron, year, month, day)) continue;
    let best: number | null = null;
    let bestHour = 0;
    for (const hour of cron.hours) {
      // Wall times more than 3 hours apart keep their order whatever DST does (no zone skips more).
      if (offset === 0 && hour < start.hour - 3) continue;
      if (best !== null && hour > bestHour + 3) break;
      for (const minute of cron.minutes) {
        const at = instantOf({ year, month, day, hour, minute }, zone);
        // The earliest of the day; gaps can reorder wall times and instants, so every one is looked at.
        if (at > from && (best === null || at < best)) [best, bestHour] = [at, hour];
      }
    }
    if (best !== null) return new Date(best);
  }
  return null;
}
