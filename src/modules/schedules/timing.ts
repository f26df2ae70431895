import { badRequest } from '../../platform/http/errors.js';
import { CronError, nextCronRun, parseCron } from './cron.js';
import { canonicalTimeZone } from './time-zone.js';

/** Runs closer together than this are refused: a schedule queues real work (a cloud read, an audit). */
export const MIN_INTERVAL_SECONDS = 300;
/** A year: anything rarer is a one-off. */
export const MAX_INTERVAL_SECONDS = 366 * 86_400;
/** Consecutive cron runs checked against the minimum spacing. */
const SPACING_SAMPLE = 24;

export interface Timing {
  cron: string | null;
  interval_seconds: number | null;
  time_zone: string;
}

/**
 * Checks a schedule's timing and returns it normalised (canonical zone name, trimmed expression);
 * every refusal is a 400 naming the field and why.
 */
export function checkTiming(input: { cron?: string | null; interval_seconds?: number | null; time_zone?: string | null }, now: Date): Timing {
  const cron = input.cron?.trim() || null;
  const interval = input.interval_seconds ?? null;
  if ((cron === null) === (interval === null)) {
    throw badRequest('give exactly one of cron (a cron expression) and interval_seconds', { fields: ['cron', 'interval_seconds'] });
  }
  const zoneName = input.time_zone ?? 'UTC';
  const zone = canonicalTimeZone(zoneName);
  if (zone === null) throw badRequest(`time_zone: "${zoneName}" is not an IANA time zone (such as Europe/Berlin or UTC)`, { field: 'time_zone' });
  if (interval !== null) {
    if (!Number.isInteger(interval) || interval < MIN_INTERVAL_SECONDS || interval > MAX_INTERVAL_SECONDS) {
      throw badRequest(`interval_seconds: ${interval} is outside ${MIN_INTERVAL_SECONDS}-${MAX_INTERVAL_SECONDS} (at least 5 minutes, at most a year)`, {
        field: 'interval_seconds',
      });
    }
    return { cron: null, interval_seconds: interval, time_zone: zone };
  }
  let parsed;
  try {
    parsed = parseCron(cron!, zone);
  } catch (error) {
    if (error instanceof CronError) throw badRequest(`cron: "${cron}": ${error.message}`, { field: 'cron' });
    throw error;
  }
  let at: Date | null = nextCronRun(parsed, now);
  if (at === null) throw badRequest(`cron: "${cron}" never matches a date (such as 30 February)`, { field: 'cron' });
  for (let i = 0; i < SPACING_SAMPLE; i++) {
    const next = nextCronRun(parsed, at);
    if (next === null) break;
    if (next.getTime() - at.getTime() < MIN_INTERVAL_SECONDS * 1000) {
      throw badRequest(
        `cron: "${cron}" runs less than 5 minutes apart (${at.toISOString()} and ${next.toISOString()}); runs must be at least ${MIN_INTERVAL_SECONDS} seconds apart`,
        { field: 'cron' },
      );
    }
    at = next;
  }
  return { cron, interval_seconds: null, time_zone: zone };
}

/**
 * The next run strictly after `now`. An interval keeps its cadence from `anchor` (the run that was
 * due), skipping the runs missed while no scheduler ran rather than firing them all at once; a cron
 * expression's next match is in the schedule's time zone.
 */
export function nextRunAfter(timing: Timing, now: Date, anchor: Date | null = null): Date | null {
  if (timing.interval_seconds !== null) {
    const step = timing.interval_seconds * 1000;
    if (anchor === null) return new Date(now.getTime() + step);
    const missed = Math.max(0, Math.floor((now.getTime() - anchor.getTime()) / step));
    let next = anchor.getTime() + missed * step;
    while (next <= now.getTime()) next += step;
    return new Date(next);
  }
  return nextCronRun(parseCron(timing.cron!, timing.time_zone), now);
}
