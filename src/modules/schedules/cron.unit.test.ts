import { describe, expect, it } from 'vitest';
import { CronError, nextCronRun, parseCron } from './cron.js';
import { canonicalTimeZone } from './time-zone.js';
import { checkTiming, nextRunAfter } from './timing.js';

const runs = (expr: string, zone: string, from: string, n: number) => {
  const out: string[] = [];
  const cron = parseCron(expr, zone);
  let at = new Date(from);
  for (let i = 0; i < n; i++) {
    at = nextCronRun(cron, at)!;
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
    // A skipped 02:30 runs at the first valid time after the gap, 03:00 CEST (croner, as Vixie cron;
    // the hand-written reader before it moved it by the gap's length, to 03:30).
    expect(runs('30 2 * * *', 'Europe/Berlin', '2027-03-27T12:00:00Z', 2)).toEqual(['2027-03-28T01:00:00.000Z', '2027-03-29T00:30:00.000Z']);
    // A list of hours is fixed times too (fixedTimeRule 'no-wildcard'): its 02:30 run is not dropped.
    expect(runs('30 2,14 * * *', 'Europe/Berlin', '2027-03-27T12:00:00Z', 3)).toEqual(['2027-03-27T13:30:00.000Z', '2027-03-28T01:00:00.000Z', '2027-03-28T12:30:00.000Z']);
    // Every 30 minutes keeps its real-time spacing through the repeated hour (02:00 and 02:30 twice).
    expect(runs('*/30 * * * *', 'Europe/Berlin', '2027-10-30T23:45:00Z', 5)).toEqual([
      '2027-10-31T00:00:00.000Z',
      '2027-10-31T00:30:00.000Z',
      '2027-10-31T01:00:00.000Z',
      '2027-10-31T01:30:00.000Z',
      '2027-10-31T02:00:00.000Z',
    ]);
  });

  it('reads lists, ranges, steps, names, 7 for Sunday and shorthands', () => {
    expect(runs('0 9 * * mon-fri', 'America/New_York', '2026-11-27T20:00:00Z', 2)).toEqual(['2026-11-30T14:00:00.000Z', '2026-12-01T14:00:00.000Z']);
    expect(runs('*/20 * * * *', 'UTC', '2026-01-01T00:00:00Z', 3)).toEqual(['2026-01-01T00:20:00.000Z', '2026-01-01T00:40:00.000Z', '2026-01-01T01:00:00.000Z']);
    // "5/15" is from 5 to the end by 15, as crontab reads it (sloppyRanges).
    expect(runs('5/15 * * * *', 'UTC', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-01T00:05:00.000Z',
      '2026-01-01T00:20:00.000Z',
      '2026-01-01T00:35:00.000Z',
      '2026-01-01T00:50:00.000Z',
    ]);
    expect(runs('0 0 * * 7', 'UTC', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-04T00:00:00.000Z']);
    expect(runs('@monthly', 'UTC', '2026-01-15T00:00:00Z', 2)).toEqual(['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
    expect(runs('15 3 1,15 jan,jul *', 'UTC', '2026-01-02T00:00:00Z', 2)).toEqual(['2026-01-15T03:15:00.000Z', '2026-07-01T03:15:00.000Z']);
    // Day of month and day of week both restricted: either matches, as in crontab.
    expect(runs('0 0 13 * fri', 'UTC', '2026-02-01T00:00:00Z', 3)).toEqual(['2026-02-06T00:00:00.000Z', '2026-02-13T00:00:00.000Z', '2026-02-20T00:00:00.000Z']);
    expect(nextCronRun(parseCron('0 0 30 2 *'), new Date('2026-01-01'))).toBeNull();
  });

  it('names the field and why an expression is refused', () => {
    // The field and the value come from us; the reason is croner's, except for out-of-range values,
    // which croner reports zero-based for day of month and month ("0 0 0 * *" as -1).
    const cases: Array<[string, string]> = [
      ['* * *', 'expected 5 fields (minute hour day-of-month month day-of-week), got 3'],
      ['0 0 * * * *', 'expected 5 fields (minute hour day-of-month month day-of-week), got 6: seconds are not supported'],
      ['61 * * * *', 'field 1 (minute) "61": 61 is outside 0-59'],
      ['* 24 * * *', 'field 2 (hour) "24": 24 is outside 0-23'],
      ['0 0 0 * *', 'field 3 (day of month) "0": 0 is outside 1-31'],
      ['0 0 1 13 *', 'field 4 (month) "13": 13 is outside 1-12'],
      ['0 0 * * 8', 'field 5 (day of week) "8": 8 is outside 0-7'],
      ['* * * foo *', 'field 4 (month) "foo": configuration entry 4 (foo) contains illegal characters'],
      ['5-1 * * * *', `field 1 (minute) "5-1": From value is larger than to value: '5-1'`],
      ['*/0 * * * *', 'field 1 (minute) "*/0": Syntax error, illegal stepping: 0'],
      ['@every 5m', 'unknown shorthand "@every 5m": use @yearly, @monthly, @weekly, @daily or @hourly'],
      ['@reboot', 'unknown shorthand "@reboot": use @yearly, @monthly, @weekly, @daily or @hourly'],
    ];
    for (const [expr, message] of cases) {
      let thrown: unknown;
      try {
        parseCron(expr);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, expr).toBeInstanceOf(CronError);
      expect((thrown as Error).message, expr).toBe(message);
    }
  });
});

describe('time zones and timing', () => {
  it('knows IANA names only', () => {
    expect(canonicalTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeNull();
    expect(canonicalTimeZone('+01:00')).toBeNull();
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
