import { badRequest } from '../../../platform/http/errors.js';

/** The longest range a history or trend request may ask for: two years of days. */
export const MAX_RANGE_DAYS = 731;

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * A time given as a calendar date (YYYY-MM-DD, a UTC day: `from` at its start, `to` at its end) or an
 * RFC 3339 date-time. Anything else is a 400 naming the parameter.
 */
export function parseTime(name: string, value: string, end = false): Date {
  const date = DATE.exec(value);
  if (date) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const start = new Date(Date.UTC(y, m - 1, d));
    if (start.getUTCFullYear() !== y || start.getUTCMonth() !== m - 1 || start.getUTCDate() !== d) throw badRequest(`${name} is not a calendar date: "${value}"`);
    return end ? new Date(start.getTime() + DAY_MS - 1) : start;
  }
  const at = DATE_TIME.test(value) ? new Date(value) : null;
  if (!at || Number.isNaN(at.getTime())) throw badRequest(`${name} must be a date (YYYY-MM-DD) or an RFC 3339 date-time, got "${value}"`);
  return at;
}

/**
 * `from`..`to` (both included) of a request: `to` defaults to now and `from` to `defaultDays` before
 * it; 400 when from is after to or the range is longer than MAX_RANGE_DAYS.
 */
export function parseRange(query: { from?: string | undefined; to?: string | undefined }, now: Date, defaultDays: number): { from: Date; to: Date } {
  const to = query.to === undefined ? now : parseTime('to', query.to, true);
  const from = query.from === undefined ? new Date(to.getTime() - defaultDays * DAY_MS) : parseTime('from', query.from);
  if (from > to) throw badRequest(`from (${from.toISOString()}) is after to (${to.toISOString()})`);
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS)
    throw badRequest(`the range from ${from.toISOString()} to ${to.toISOString()} is longer than ${MAX_RANGE_DAYS} days: ask for a shorter one`);
  return { from, to };
}

/** 'YYYY-MM-DD' of the UTC day of `at`. */
export function isoDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** Every UTC day from `from`'s to `to`'s, both included, as 'YYYY-MM-DD'. */
export function daysBetween(from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let t = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()); t <= to.getTime(); t += DAY_MS) days.push(isoDay(new Date(t)));
  return days;
}
