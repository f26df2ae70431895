import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { builtinRule } from '../../src/modules/compliance/rule-catalog.js';
import { enqueueJob } from '../../src/platform/jobs/queue.js';
import { HISTORY_JOB } from '../../src/modules/compliance/history/history-job.js';

/** Issue 23 item 4: the compliance state per audit and per day, the findings' flow per day, thinning. */

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let token: string;
// One finding per violating key: its fixture violates no other rule.
const RULE = 'aws-kms-key-rotation-enabled';
const SEVERITY = builtinRule(RULE)!.severity;
const key = (name: string, which: 'violating' | 'compliant' = 'violating') => fixtureNode(RULE, which, name);
const findingOf = (name: string) => `${RULE}:${nodeIdOf(key(name))}`;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const START = new Date('2026-11-23T12:00:00.000Z');

beforeAll(async () => {
  t = await createTestApp({ clockStart: START.toISOString() });
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
});
afterAll(() => t.close());
beforeEach(async () => {
  // Fixture tokens live an hour; these tests move the clock by days.
  token = (await fresh(t, tenant.users['security-analyst'])).token;
});

const get = (url: string, as = token) => call(t.app, as, { url: `/api/v1/tenants/${tenant.id}${url}` });
const history = async (query: string) => {
  const res = await get(`/controls/history?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const trend = async (query: string) => {
  const res = await get(`/findings/trend?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const advance = async (ms: number) => {
  t.clock.advance(ms);
  token = (await fresh(t, tenant.users['security-analyst'])).token;
};
const runHistoryJob = async () => {
  await enqueueJob(t.deps.database.db, t.clock, { kind: HISTORY_JOB });
  await t.drain();
};
const resolve = (id: string) => call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}/resolve`, payload: {}, expect: 200 });

describe('GET /controls/history', () => {
  it('an audit records its end state as a run point and as the day point: the numbers /controls/status gives', async () => {
    await putNodes(t, token, tenant.id, [key('b1'), key('b2')]);
    const { run } = await audit(t, token, tenant.id);
    const status = (await get('/controls/status')).json();
    const runs = await history('interval=run');
    expect(runs).toMatchObject({ interval: 'run', total: 1, page: 1, per_page: 400, total_pages: 1 });
    const [point] = runs.items;
    expect(point).toMatchObject({ at: START.toISOString(), taken_at: START.toISOString(), run_id: run.job_id });
    expect(Object.keys(point.frameworks).sort()).toEqual(['overall', ...Object.keys(status.by_framework)].sort());
    expect(point.frameworks.overall).toEqual({
      score: status.overall_score,
      by_severity: status.by_severity,
      by_status: { open: 2, accepted: 0, resolved: 0 },
      controls: {
        applicable: Object.values(status.by_framework).reduce((n: number, f: any) => n + f.applicable_controls, 0),
        passing: Object.values(status.by_framework).reduce((n: number, f: any) => n + f.passing_controls, 0),
        failing: Object.values(status.by_framework).reduce((n: number, f: any) => n + f.failing_controls, 0),
        unknown: Object.values(status.by_framework).reduce((n: number, f: any) => n + f.unknown_controls, 0),
      },
    });
    for (const [framework, f] of Object.entries(status.by_framework) as Array<[string, any]>) {
      expect(point.frameworks[framework]).toMatchObject({
        score: f.score,
        by_status: { open: f.findings },
        controls: { applicable: f.applicable_controls, passing: f.passing_controls, failing: f.failing_controls, unknown: f.unknown_controls },
      });
    }
    expect(point.frameworks.overall.score).toBeLessThan(100);
    const days = await history('interval=day');
    expect(days.items).toHaveLength(1);
    expect(days.items[0]).toMatchObject({ at: '2026-11-23T00:00:00.000Z', run_id: run.job_id, frameworks: point.frameworks });
    // Day is the default interval.
    expect((await history('')).items).toEqual(days.items);
  });

  it('day points over days: the last audit of a day is its point; on a day without an audit the history job takes it, once', async () => {
    await advance(DAY); // 2026-11-24 12:00
    await resolve(findingOf('b2'));
    await advance(2 * HOUR);
    // Changed (still violating), so the audit evaluates it again and reopens its finding.
    await putNodes(t, token, tenant.id, [{ ...key('b2'), tags: { revision: '2' } }]);
    const second = (await audit(t, token, tenant.id)).run; // reopens b2
    await advance(2 * HOUR);
    await putNodes(t, token, tenant.id, [key('b1', 'compliant')]);
    const third = (await audit(t, token, tenant.id)).run; // resolves b1
    const runs = await history('interval=run');
    expect(runs.items.map((p: any) => [p.run_id, p.frameworks.overall.by_status])).toEqual([
      [expect.any(String), { open: 2, accepted: 0, resolved: 0 }],
      [second.job_id, { open: 2, accepted: 0, resolved: 0 }],
      [third.job_id, { open: 1, accepted: 0, resolved: 1 }],
    ]);
    await advance(DAY); // 2026-11-25 16:00, no audit
    await runHistoryJob();
    await runHistoryJob();
    const days = await history('interval=day');
    expect(days.items.map((p: any) => [p.at, p.run_id, p.frameworks.overall.by_status.open])).toEqual([
      ['2026-11-23T00:00:00.000Z', expect.any(String), 2],
      ['2026-11-24T00:00:00.000Z', third.job_id, 1],
      ['2026-11-25T00:00:00.000Z', null, 1],
    ]);
    expect(days.items[2].taken_at).toBe(t.clock.now().toISOString());
    // from and to narrow the range (a date to includes its day); pages hold points.
    expect((await history('from=2026-11-24&to=2026-11-24')).items.map((p: any) => p.at)).toEqual(['2026-11-24T00:00:00.000Z']);
    const paged = await history('per_page=2&page=2');
    expect(paged).toMatchObject({ total: 3, total_pages: 2, items: [{ at: '2026-11-25T00:00:00.000Z' }] });
  });

  it('?framework= gives that framework only', async () => {
    const framework = builtinRule(RULE)!.framework;
    const days = await history(`interval=day&framework=${framework}`);
    expect(days.items).toHaveLength(3);
    for (const p of days.items) expect(Object.keys(p.frameworks)).toEqual([framework]);
  });

  it('a risk acceptance moves findings from open to accepted in the next point', async () => {
    await call(t.app, token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(findingOf('b2'))}/accept`,
      payload: { reason: 'compensating control', owner: 'storage', expires_at: new Date(t.clock.now().getTime() + 30 * DAY).toISOString() },
      expect: 201,
    });
    await advance(HOUR);
    await audit(t, token, tenant.id);
    const last = (await history('interval=run')).items.at(-1);
    expect(last.frameworks.overall.by_status).toEqual({ open: 0, accepted: 1, resolved: 1 });
    expect(last.frameworks.overall.by_severity[SEVERITY]).toBe(0);
    expect(last.frameworks.overall.score).toBe((await get('/controls/status')).json().overall_score);
    expect(last.frameworks.overall.score).toBeGreaterThan((await history('interval=run')).items[0].frameworks.overall.score);
  });

  it('400: an unknown interval or framework, a bad date, from after to, a range over 731 days', async () => {
    const cases: Array<[string, RegExp]> = [
      ['interval=week', /interval/],
      ['framework=nist', /framework/],
      ['from=2026-02-30', /from is not a calendar date/],
      ['to=yesterday', /to must be a date \(YYYY-MM-DD\) or an RFC 3339 date-time/],
      ['from=2026-11-20&to=2026-11-10', /from \(2026-11-20T00:00:00.000Z\) is after to/],
      ['from=2024-01-01&to=2026-11-20', /longer than 731 days/],
      ['per_page=1001', /per_page/],
    ];
    for (const [query, message] of cases) {
      const res = await get(`/controls/history?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.message, query).toMatch(message);
    }
  });

  it('another tenant sees none of it; no token is 401', async () => {
    const theirToken = (await fresh(t, other.users['security-analyst'])).token;
    const theirs = await call(t.app, theirToken, { url: `/api/v1/tenants/${other.id}/controls/history?interval=run&from=2026-11-01` });
    expect(theirs.statusCode).toBe(200);
    expect(theirs.json()).toMatchObject({ total: 0, items: [] });
    const trendOfTheirs = await call(t.app, theirToken, { url: `/api/v1/tenants/${other.id}/findings/trend?from=2026-11-23&to=2026-11-25` });
    expect(trendOfTheirs.json().totals).toEqual({ opened: 0, resolved: 0, reopened: 0 });
    const crossed = await call(t.app, theirToken, { url: `/api/v1/tenants/${tenant.id}/controls/history` });
    expect(crossed.statusCode).toBe(403);
    const anonymous = await t.app.inject({ url: `/api/v1/tenants/${tenant.id}/findings/trend` });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('GET /findings/trend', () => {
  it('opened, resolved and reopened per day; the mean time to resolve per severity runs from the last (re)opening', async () => {
    const res = await trend('from=2026-11-22&to=2026-11-25');
    expect(res.days).toEqual([
      { date: '2026-11-22', opened: 0, resolved: 0, reopened: 0 },
      { date: '2026-11-23', opened: 2, resolved: 0, reopened: 0 },
      // b2 resolved by hand at 12:00 and reopened by the audit at 14:00; b1 resolved by the audit at 16:00.
      { date: '2026-11-24', opened: 0, resolved: 2, reopened: 1 },
      { date: '2026-11-25', opened: 0, resolved: 0, reopened: 0 },
    ]);
    expect(res).toMatchObject({ from: '2026-11-22', to: '2026-11-25', totals: { opened: 2, resolved: 2, reopened: 1 } });
    // b2: one day from creation to its manual resolution; b1: 28 hours from creation.
    expect(res.mean_time_to_resolve[SEVERITY]).toEqual({ resolved: 2, mean_seconds: (24 * 3600 + 28 * 3600) / 2 });
    for (const [severity, m] of Object.entries(res.mean_time_to_resolve)) if (severity !== SEVERITY) expect(m).toEqual({ resolved: 0, mean_seconds: null });
  });

  it('a reopened finding resolved again counts from its reopening', async () => {
    // b2 (reopened 2026-11-24 14:00, accepted since) is resolved by the audit once compliant.
    await putNodes(t, token, tenant.id, [key('b2', 'compliant')]);
    const reopenedAt = new Date('2026-11-24T14:00:00.000Z').getTime();
    const seconds = (t.clock.now().getTime() - reopenedAt) / 1000;
    await audit(t, token, tenant.id);
    const today = t.clock.now().toISOString().slice(0, 10);
    const res = await trend(`from=${today}&to=${today}`);
    expect(res.days).toEqual([{ date: today, opened: 0, resolved: 1, reopened: 0 }]);
    expect(res.mean_time_to_resolve[SEVERITY]).toEqual({ resolved: 1, mean_seconds: seconds });
  });

  it('counter rows are deltas; the history job merges each day and severity into one row, and the trend stays the same', async () => {
    await putNodes(t, token, tenant.id, [key('k3')]);
    await audit(t, token, tenant.id); // opened
    await putNodes(t, token, tenant.id, [key('k3', 'compliant')]);
    await audit(t, token, tenant.id); // resolved
    const db = t.deps.database.db;
    const rows = () => db.selectFrom('finding_daily_counts').select(['day', 'severity']).where('workspace_id', '=', tenant.defaultWorkspaceId).execute();
    const keys = (list: Array<{ day: string; severity: string }>) => new Set(list.map((r) => `${r.day} ${r.severity}`)).size;
    const before = await rows();
    expect(before.length).toBeGreaterThan(keys(before));
    const trendBefore = await trend('from=2026-11-20&to=2026-11-30');
    await runHistoryJob();
    const after = await rows();
    expect(after.length).toBe(keys(after));
    expect(keys(after)).toBe(keys(before));
    expect(await trend('from=2026-11-20&to=2026-11-30')).toEqual(trendBefore);
    expect(trendBefore.totals).toEqual({ opened: 3, resolved: 4, reopened: 1 });
  });

  it('defaults to the last 30 days; 400 for a bad date, from after to, a range over 731 days', async () => {
    const res = await trend('');
    expect(res.days).toHaveLength(30);
    expect(res.to).toBe(t.clock.now().toISOString().slice(0, 10));
    for (const [query, message] of [
      ['from=2026-13-01', /from is not a calendar date/],
      ['from=2026-11-25&to=2026-11-24', /is after to/],
      ['from=2020-01-01&to=2026-01-01', /longer than 731 days/],
    ] as const) {
      const bad = await get(`/findings/trend?${query}`);
      expect(bad.statusCode, query).toBe(400);
      expect(bad.json().error.message, query).toMatch(message);
    }
  });
});

describe('thinning', () => {
  it('points older than a year are thinned to the last of each ISO week, never lost', async () => {
    // Fourteen more days of day points, from the history job.
    for (let i = 0; i < 14; i++) {
      await advance(DAY);
      await runHistoryJob();
    }
    const db = t.deps.database.db;
    const before = await db
      .selectFrom('compliance_history')
      .select(['kind', 'point_at'])
      .where('workspace_id', '=', tenant.defaultWorkspaceId)
      .where('framework', '=', 'overall')
      .orderBy('point_at')
      .execute();
    await advance(400 * DAY);
    await runHistoryJob();
    const after = await db
      .selectFrom('compliance_history')
      .select(['kind', 'point_at'])
      .where('workspace_id', '=', tenant.defaultWorkspaceId)
      .where('framework', '=', 'overall')
      .orderBy('point_at')
      .execute();
    // ISO week: Monday 00:00 UTC of the point's week.
    const weekOf = (at: Date) => {
      const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
      return day.getTime() - ((day.getUTCDay() + 6) % 7) * DAY;
    };
    const lastPerWeek = new Map<string, number>();
    for (const p of before) {
      const key = `${p.kind}:${weekOf(new Date(p.point_at))}`;
      lastPerWeek.set(key, Math.max(lastPerWeek.get(key) ?? 0, new Date(p.point_at).getTime()));
    }
    const kept = [...lastPerWeek].map(([key, at]) => `${key.split(':')[0]} ${new Date(at).toISOString()}`).sort();
    const old = after.filter((p) => new Date(p.point_at).getTime() < t.clock.now().getTime() - 365 * DAY);
    expect(old.map((p) => `${p.kind} ${new Date(p.point_at).toISOString()}`).sort()).toEqual(kept);
    expect(old.length).toBeLessThan(before.length);
    // Every week of the old days still has its point, and today's point was taken.
    expect(new Set(old.filter((p) => p.kind === 'day').map((p) => weekOf(new Date(p.point_at)))).size).toBe(
      new Set(before.filter((p) => p.kind === 'day').map((p) => weekOf(new Date(p.point_at)))).size,
    );
    expect(after.at(-1)).toMatchObject({ kind: 'day' });
    expect(new Date(after.at(-1)!.point_at).toISOString()).toBe(`${t.clock.now().toISOString().slice(0, 10)}T00:00:00.000Z`);
    // Thinning again changes nothing.
    await runHistoryJob();
    const again = await db
      .selectFrom('compliance_history')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', tenant.defaultWorkspaceId)
      .where('framework', '=', 'overall')
      .executeTakeFirstOrThrow();
    expect(Number(again.n)).toBe(after.length);
  });
});
