import { describe, expect, it } from 'vitest';
import { CronError, nextCronRun, parseCron } from './cron.js';
import { canonicalTimeZone, instantOf } from './zoned-time.js';
import { checkTiming, nextRunAfter } from './timing.js';

const runs = (expr: string, zone: string, from: string, n: number) => {
  const out: string[] = [];
  let at = new Date(from);
  for (let i = 0; i < n; i++) {
    at = nextCronRun(parseCron(expr), zone, at)!;
    out.push(at.toISOString());
  }
  return out;
};

describe('cron expressions', () => {
  it('daily 02:00 in Berlin keeps its wall time across both DST changes', () => {
    // 28 March 2027 has no 02:00 in Berlin (02:00 CET → 03:00 CEST): that run is at 03:00 CEST.
    expect(runs('0 2 * * *', 'Europe/Berlin', '2027-03-26T12:00:00Z', 4)).toEqual([
      '2027-03-27T01:00:00.000Z',
      '2027-03-28T01:00:00.000Z',
      '2027-03-29T00:00:00.000Z',
      '2027-03-30T00:00:00.000Z',
    ]);
    // 31 October 2027 has 02:30 twice: it runs once, at the first (CEST).
    expect(runs('30 2 * * *', 'Europe/Berlin', '2027-10-30T12:00:00Z', 3)).toEqual(['2027-10-31T00:30:00.000Z', '2027-11-01T01:30:00.000Z', '2027-11-02T01:30:00.000Z']);
  });

  it('reads lists, ranges, steps, names, 7 for Sunday and shorthands', () => {
    expect(runs('0 9 * * mon-fri', 'America/New_York', '2026-11-27T20:00:00Z', 2)).toEqual(['2026-11-30T14:00:00.000Z', '2026-12-01T14:00:00.000Z']);
    expect(runs('*/20 * * * *', 'UTC', '2026-01-01T00:00:00Z', 3)).toEqual(['2026-01-01T00:20:00.000Z', '2026-01-01T00:40:00.000Z', '2026-01-01T01:00:00.000Z']);
    expect(runs('0 0 * * 7', 'UTC', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-04T00:00:00.000Z']);
    expect(runs('@monthly', 'UTC', '2026-01-15T00:00:00Z', 2)).toEqual(['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
    expect(runs('15 3 1,15 jan,jul *', 'UTC', '2026-01-02T00:00:00Z', 2)).toEqual(['2026-01-15T03:15:00.000Z', '2026-07-01T03:15:00.000Z']);
    // Day of month and day of week both restricted: either matches, as in crontab.
    expect(runs('0 0 13 * fri', 'UTC', '2026-02-01T00:00:00Z', 3)).toEqual(['2026-02-06T00:00:00.000Z', '2026-02-13T00:00:00.000Z', '2026-02-20T00:00:00.000Z']);
    expect(nextCronRun(parseCron('0 0 30 2 *'), 'UTC', new Date('2026-01-01'))).toBeNull();
  });

  it('names the field and why an expression is refused', () => {
    const cases: Array<[string, RegExp]> = [
      ['* * *', /expected 5 fields/],
      ['0 0 * * * *', /seconds are not supported/],
      ['61 * * * *', /field 1 \(minute\) "61": 61 is outside 0-59/],
      ['* 24 * * *', /field 2 \(hour\).*outside 0-23/],
      ['0 0 0 * *', /field 3 \(day of month\).*outside 1-31/],
      ['* * * foo *', /field 4 \(month\) "foo": "foo" is not a number or a name/],
      ['5-1 * * * *', /runs backwards/],
      ['*/0 * * * *', /step must be at least 1/],
      ['@every 5m', /unknown shorthand/],
    ];
    for (const [expr, message] of cases) {
      expect(() => parseCron(expr), expr).toThrow(CronError);
      expect(() => parseCron(expr), expr).toThrow(message);
    }
  });
});

describe('time zones and timing', () => {
  it('knows IANA names only', () => {
    expect(canonicalTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeNull();
    expect(canonicalTimeZone('+01:00')).toBeNull();
    expect(instantOf({ year: 2027, month: 3, day: 28, hour: 2, minute: 30 }, 'Europe/Berlin')).toBe(Date.parse('2027-03-28T01:30:00Z'));
  });

  it('refuses runs closer than 5 minutes, both or neither of cron and interval', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(() => checkTiming({ cron: '*/2 * * * *' }, now)).toThrow(/less than 5 minutes apart/);
    expect(() => checkTiming({ interval_seconds: 60 }, now)).toThrow(/interval_seconds: 60 is outside 300/);
    expect(() => checkTiming({ cron: '@daily', interval_seconds: 3600 }, now)).toThrow(/exactly one of cron/);
    expect(() => checkTiming({}, now)).toThrow(/exactly one of cron/);
    expect(() => checkTiming({ cron: '@daily', time_zone: 'Nowhere/City' }, now)).toThrow(/time_zone: "Nowhere\/City" is not an IANA time zone/);
    expect(checkTiming({ cron: ' */5 * * * * ', time_zone: 'Europe/Berlin' }, now)).toEqual({ cron: '*/5 * * * *', interval_seconds: null, time_zone: 'Europe/Berlin' });
  });

  it('an interval keeps its cadence and skips runs missed while no scheduler ran', () => {
    const timing = { cron: null, interval_seconds: 600, time_zone: 'UTC' };
    const anchor = new Date('2026-01-01T00:00:00Z');
    expect(nextRunAfter(timing, new Date('2026-01-01T00:00:01Z'), anchor)?.toISOString()).toBe('2026-01-01T00:10:00.000Z');
    expect(nextRunAfter(timing, new Date('2026-01-01T01:05:00Z'), anchor)?.toISOString()).toBe('2026-01-01T01:10:00.000Z');
    expect(nextRunAfter(timing, new Date('2026-01-01T01:10:00Z'), anchor)?.toISOString()).toBe('2026-01-01T01:20:00.000Z');
  });
});
