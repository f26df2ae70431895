import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, fresh, type Session, type TenantFixture } from '../harness/identity.js';
import { events } from '../harness/compliance.js';
import { Scheduler } from '../../src/platform/jobs/scheduler.js';
import { schedulesModule } from '../../src/modules/schedules/module.js';
import { DISPATCH_JOB, dispatchSchedules, fireDueSchedules } from '../../src/modules/schedules/dispatcher.js';
import type { DatabaseHandle } from '../../src/platform/db/database.js';

/**
 * Workspace schedules (/schedules) over HTTP, and the dispatcher that fires them, on a clock the test
 * moves: a schedule is made due by setting the clock, never by waiting.
 */

// Discovery templates read a state from S3 with the service's own credentials, which the operator
// grants this tenant (see test/exports/discovery.test.ts); the jobs are queued, never run here.
const GRANTED = 'schedules-granted';
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;

beforeAll(async () => {
  t = await createTestApp({ clockStart: '2027-03-26T12:00:00.000Z', env: { CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS: GRANTED } });
  tenant = await buildTenant(t, { name: GRANTED });
  other = await buildTenant(t);
});
afterAll(() => t.close());

const url = (tenantId: string, path = '') => `/api/v1/tenants/${tenantId}/schedules${path}`;
/** Sessions live an hour and the tests move the clock by days: a new one for each request. */
const as = async (session: Session = tenant.admin) => (await fresh(t, session)).token;
const post = async (payload: Record<string, unknown>, session?: Session) => call(t.app, await as(session), { method: 'POST', url: url(tenant.id), payload });
const create = async (payload: Record<string, unknown>) => {
  const res = await post(payload);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
};
const get = async (id: string) => (await call(t.app, await as(), { url: url(tenant.id, `/${id}`), expect: 200 })).json();
const runsOf = async (id: string) => (await call(t.app, await as(), { url: url(tenant.id, `/${id}/runs`), expect: 200 })).json();
const dailyAudit = { name: 'nightly audit', kind: 'audit', target: { frameworks: ['cis-aws'] }, cron: '0 2 * * *', time_zone: 'Europe/Berlin' };

async function discoveryTemplate(config: Record<string, unknown>): Promise<string> {
  const res = await call(t.app, await as(), {
    method: 'POST',
    url: `/api/v1/tenants/${tenant.id}/jobs`,
    payload: { name: 'prod state', plugins: ['terraform-state'], config: { 'terraform-state': config } },
    expect: 201,
  });
  return res.json().id;
}

describe('/schedules', () => {
  it('creates, lists, reads, patches and deletes a schedule, each change audited', async () => {
    const created = await create(dailyAudit);
    expect(created).toMatchObject({
      name: 'nightly audit',
      kind: 'audit',
      target: { frameworks: ['cis-aws'] },
      cron: '0 2 * * *',
      interval_seconds: null,
      time_zone: 'Europe/Berlin',
      enabled: true,
      // 02:00 CET on 27 March.
      next_run_at: '2027-03-27T01:00:00.000Z',
      last_run_at: null,
      last_status: null,
    });
    const list = (await call(t.app, await as(tenant.users['read-only']), { url: `${url(tenant.id)}?per_page=1`, expect: 200 })).json();
    expect(list).toMatchObject({ page: 1, per_page: 1 });
    expect(list.total).toBeGreaterThanOrEqual(1);
    expect(list.items[0].id).toBe(created.id);
    expect(await get(created.id)).toEqual(created);

    const token = await as();
    const patched = (await call(t.app, token, { method: 'PATCH', url: url(tenant.id, `/${created.id}`), payload: { interval_seconds: 3600 }, expect: 200 })).json();
    expect(patched).toMatchObject({ cron: null, interval_seconds: 3600, next_run_at: '2027-03-26T13:00:00.000Z' });
    const disabled = (await call(t.app, token, { method: 'PATCH', url: url(tenant.id, `/${created.id}`), payload: { enabled: false }, expect: 200 })).json();
    expect(disabled).toMatchObject({ enabled: false, next_run_at: null });
    const back = (
      await call(t.app, token, {
        method: 'PATCH',
        url: url(tenant.id, `/${created.id}`),
        payload: { enabled: true, cron: '@daily', time_zone: 'America/New_York', name: 'renamed' },
        expect: 200,
      })
    ).json();
    expect(back).toMatchObject({ name: 'renamed', enabled: true, cron: '@daily', interval_seconds: null, time_zone: 'America/New_York', next_run_at: '2027-03-27T04:00:00.000Z' });

    await call(t.app, token, { method: 'DELETE', url: url(tenant.id, `/${created.id}`), expect: 204 });
    expect((await call(t.app, token, { url: url(tenant.id, `/${created.id}`) })).statusCode).toBe(404);
    const log = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?target_id=${created.id}&per_page=50`, expect: 200 })).json();
    const actions = log.items
      .filter((e: { target_id: string }) => e.target_id === created.id)
      .map((e: { action: string }) => e.action)
      .sort();
    expect(actions).toEqual(['schedule.created', 'schedule.deleted', 'schedule.updated', 'schedule.updated', 'schedule.updated']);
  });

  it('400 naming the field: bad cron, unknown time zone, short interval, both or neither, a target unfit for the kind', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...dailyAudit, cron: '0 25 * * *' }, /^cron: "0 25 \* \* \*": field 2 \(hour\) "25": 25 is outside 0-23$/],
      [{ ...dailyAudit, cron: 'every day' }, /^cron: .*expected 5 fields/],
      [{ ...dailyAudit, cron: '* * * * *' }, /^cron: .*less than 5 minutes apart/],
      [{ ...dailyAudit, time_zone: 'Europe/Atlantis' }, /^time_zone: "Europe\/Atlantis" is not an IANA time zone/],
      [{ ...dailyAudit, cron: undefined, interval_seconds: 60 }, /^interval_seconds: 60 is outside 300-/],
      [{ ...dailyAudit, interval_seconds: 600 }, /exactly one of cron .* and interval_seconds/],
      [{ ...dailyAudit, cron: undefined }, /exactly one of cron .* and interval_seconds/],
      [{ ...dailyAudit, target: { frameworks: ['iso-9001'] } }, /target.frameworks: unknown framework "iso-9001"/],
      [{ ...dailyAudit, target: { job_id: '00000000-0000-4000-8000-000000000000' } }, /^target.job_id: only discovery schedules/],
      [{ ...dailyAudit, kind: 'discovery', target: {} }, /^target.job_id: a discovery schedule names/],
      [{ ...dailyAudit, kind: 'discovery', target: { job_id: '00000000-0000-4000-8000-000000000000' } }, /^target.job_id: no discovery job/],
      [{ ...dailyAudit, kind: 'backup' }, /kind/],
      [{ ...dailyAudit, extra: 1 }, /extra/],
    ];
    for (const [payload, message] of cases) {
      const res = await post(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.message, JSON.stringify(payload)).toMatch(message);
    }
    // An uploaded state is dropped after its job: such a job cannot be repeated.
    const uploaded = await discoveryTemplate({ state: { version: 4, resources: [] } });
    const res = await post({ name: 'x', kind: 'discovery', target: { job_id: uploaded }, interval_seconds: 3600 });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/uploaded Terraform state/);
    // The same checks on PATCH.
    const s = await create(dailyAudit);
    const bad = await call(t.app, await as(), { method: 'PATCH', url: url(tenant.id, `/${s.id}`), payload: { cron: '0 0 31 2 *' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/^cron: .*never matches/);
    await call(t.app, await as(), { method: 'DELETE', url: url(tenant.id, `/${s.id}`), expect: 204 });
  });

  it('404 across tenants; writing needs the permission of the schedule kind', async () => {
    const s = await create(dailyAudit);
    const otherToken = await as(other.admin);
    for (const [method, path] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['GET', '/runs'],
    ] as const) {
      const res = await call(t.app, otherToken, { method, url: url(other.id, `/${s.id}${path}`), ...(method === 'PATCH' ? { payload: { enabled: false } } : {}) });
      expect(res.statusCode, `${method} ${path}`).toBe(404);
    }
    expect((await call(t.app, otherToken, { url: url(other.id), expect: 200 })).json().total).toBe(0);
    // read-only may look, not schedule.
    expect((await post(dailyAudit, tenant.users['read-only'])).statusCode).toBe(403);
    // A key that may run audits (findings:write grants audit:run) but not create discovery jobs.
    const { key } = await createApiKey(t, tenant, { permissions: ['findings:write', 'jobs:read'] });
    const byKey = await call(t.app, key, { method: 'POST', url: url(tenant.id), payload: dailyAudit });
    expect(byKey.statusCode).toBe(201);
    const template = await discoveryTemplate({ state_uri: 's3://shop-tfstate/prod.tfstate' });
    const discovery = await call(t.app, key, {
      method: 'POST',
      url: url(tenant.id),
      payload: { name: 'd', kind: 'discovery', target: { job_id: template }, interval_seconds: 3600 },
    });
    expect(discovery.statusCode).toBe(403);
    expect(discovery.json().error.message).toMatch(/jobs:write/);
    for (const id of [s.id, byKey.json().id]) expect((await call(t.app, key, { method: 'DELETE', url: url(tenant.id, `/${id}`) })).statusCode).toBe(204);
  });
});

describe('the dispatcher', () => {
  it('is one recurring queue job, declared like every module schedule', () => {
    expect(schedulesModule.schedules!(t.deps)).toEqual([{ name: 'schedules-dispatcher', kind: DISPATCH_JOB, intervalMs: 30_000 }]);
  });

  it('runs a due audit schedule once with two dispatchers at once, advances next_run_at in its time zone, records the run and emits schedule.run_finished', async () => {
    t.clock.set('2027-03-26T12:00:00.000Z');
    const s = await create({ ...dailyAudit, name: 'across DST' });
    const off = await create({ ...dailyAudit, name: 'switched off', enabled: false });
    const disabledLater = await create({ ...dailyAudit, name: 'disabled later' });
    await call(t.app, await as(), { method: 'PATCH', url: url(tenant.id, `/${disabledLater.id}`), payload: { enabled: false }, expect: 200 });
    expect(s.next_run_at).toBe('2027-03-27T01:00:00.000Z');

    t.clock.set('2027-03-27T01:00:00.000Z');
    const second: DatabaseHandle = t.db.kind === 'postgres' ? await t.db.openAnother() : t.db.handle;
    try {
      const fired = (await Promise.all([fireDueSchedules(t.deps), fireDueSchedules({ ...t.deps, database: second })])).flat();
      expect(fired.filter((id) => id === s.id)).toHaveLength(1);
      expect(fired).not.toContain(off.id);
      expect(fired).not.toContain(disabledLater.id);
    } finally {
      if (second !== t.db.handle) await second.close();
    }
    // 28 March has no 02:00 in Berlin: the next run is when the clocks have jumped, 03:00 CEST.
    expect(await get(s.id)).toMatchObject({ last_run_at: '2027-03-27T01:00:00.000Z', last_status: 'running', next_run_at: '2027-03-28T01:00:00.000Z' });
    const [run] = (await runsOf(s.id)).items;
    expect(run).toMatchObject({ status: 'running', due_at: '2027-03-27T01:00:00.000Z', started_at: '2027-03-27T01:00:00.000Z', finished_at: null });
    expect(run.job_url).toBe(`/api/v1/tenants/${tenant.id}/findings/runs/${run.job_id}`);
    const audit = (await call(t.app, await as(), { url: run.job_url, expect: 200 })).json();
    expect(audit).toMatchObject({ frameworks: ['cis-aws'], trigger: 'schedule' });
    expect((await runsOf(off.id)).total).toBe(0);
    expect((await runsOf(disabledLater.id)).total).toBe(0);

    // The audit runs; the next dispatch completes the run and emits the event.
    await t.drain();
    expect((await dispatchSchedules(t.deps)).completed).toBe(1);
    const [finished] = (await runsOf(s.id)).items;
    expect(finished).toMatchObject({ id: run.id, status: 'succeeded', finished_at: '2027-03-27T01:00:00.000Z', error: null });
    expect((await get(s.id)).last_status).toBe('succeeded');
    const event = (await events(t, tenant.id, 'schedule.run_finished')).find((e) => (e.data as { run: { id: string } }).run.id === run.id)!;
    expect(event.data).toEqual({
      schedule: { id: s.id, name: 'across DST', kind: 'audit' },
      run: {
        id: run.id,
        status: 'succeeded',
        due_at: run.due_at,
        started_at: run.started_at,
        finished_at: finished.finished_at,
        job_id: run.job_id,
        job_url: run.job_url,
        error: null,
      },
    });
    // Nothing more to complete, nothing due.
    expect(await dispatchSchedules(t.deps)).toEqual({ completed: 0, fired: 0 });

    // Through the queue's own schedule this time: the dispatcher job fires the 03:00 CEST run.
    t.clock.set('2027-03-28T01:00:00.000Z');
    const scheduler = new Scheduler({ db: t.deps.database.db, clock: t.clock, log: t.deps.log, schedules: schedulesModule.schedules!(t.deps) });
    await scheduler.register();
    await scheduler.tick();
    await t.drain();
    expect(await get(s.id)).toMatchObject({ last_run_at: '2027-03-28T01:00:00.000Z', next_run_at: '2027-03-29T00:00:00.000Z' });
    expect((await runsOf(s.id)).total).toBe(2);
    expect((await runsOf(off.id)).total).toBe(0);
    for (const id of [s.id, off.id, disabledLater.id]) await call(t.app, await as(), { method: 'DELETE', url: url(tenant.id, `/${id}`), expect: 204 });
  });

  it('a due audit whose frameworks are all disabled is a failed run, with the reason and its event', async () => {
    t.clock.set('2027-05-01T00:00:00.000Z');
    const s = await create({ ...dailyAudit, name: 'cis only', cron: '@hourly', time_zone: 'UTC' });
    const settings = `/api/v1/tenants/${tenant.id}/settings/compliance`;
    await call(t.app, await as(), { method: 'PUT', url: settings, payload: { frameworks: [{ id: 'cis-aws', enabled: false }] }, expect: 200 });
    try {
      t.clock.set('2027-05-01T01:00:00.000Z');
      await fireDueSchedules(t.deps);
      const [run] = (await runsOf(s.id)).items;
      expect(run).toMatchObject({ status: 'failed', job_id: null, error: 'every framework the schedule audits (cis-aws) is disabled for this tenant' });
      expect(await get(s.id)).toMatchObject({ last_status: 'failed', next_run_at: '2027-05-01T02:00:00.000Z' });
      expect((await events(t, tenant.id, 'schedule.run_finished')).some((e) => (e.data as { run: { id: string } }).run.id === run.id)).toBe(true);
    } finally {
      await call(t.app, await as(), { method: 'PUT', url: settings, payload: { frameworks: [{ id: 'cis-aws', enabled: true }] }, expect: 200 });
      await call(t.app, await as(), { method: 'DELETE', url: url(tenant.id, `/${s.id}`), expect: 204 });
    }
  });

  it('a discovery schedule queues a copy of its job; the run ends as that job does; a vanished job is a failed run', async () => {
    t.clock.set('2027-04-01T00:00:00.000Z');
    const template = await discoveryTemplate({ state_uri: 's3://shop-tfstate/prod.tfstate' });
    const s = await create({ name: 'rediscover', kind: 'discovery', target: { job_id: template }, interval_seconds: 3600 });
    expect(s.next_run_at).toBe('2027-04-01T01:00:00.000Z');
    t.clock.set('2027-04-01T01:00:05.000Z');
    await fireDueSchedules(t.deps);
    const [run] = (await runsOf(s.id)).items;
    expect(run.status).toBe('running');
    const job = (await call(t.app, await as(), { url: run.job_url, expect: 200 })).json();
    expect(job).toMatchObject({ name: 'prod state', plugins: ['terraform-state'], status: 'queued', created_by: `schedule:${s.id}` });
    expect(job.id).not.toBe(template);
    // The interval keeps its cadence from when the run was due.
    expect((await get(s.id)).next_run_at).toBe('2027-04-01T02:00:00.000Z');

    // Still running when the next one is due: that one is skipped, not piled up.
    t.clock.set('2027-04-01T02:00:00.000Z');
    await fireDueSchedules(t.deps);
    const [skipped] = (await runsOf(s.id)).items;
    expect(skipped).toMatchObject({ status: 'skipped', job_id: null, error: `the previous run (${run.id}) was still running` });

    await call(t.app, await as(), { method: 'POST', url: `/api/v1/tenants/${tenant.id}/jobs/${job.id}/cancel`, expect: 200 });
    await dispatchSchedules(t.deps);
    expect((await runsOf(s.id)).items.find((r: { id: string }) => r.id === run.id)).toMatchObject({ status: 'cancelled' });
    expect((await get(s.id)).last_status).toBe('cancelled');

    await t.deps.database.db.deleteFrom('discovery_jobs').where('id', '=', template).execute();
    t.clock.set('2027-04-01T03:00:00.000Z');
    await dispatchSchedules(t.deps);
    const [failed] = (await runsOf(s.id)).items;
    expect(failed).toMatchObject({ status: 'failed', error: `discovery job ${template} no longer exists`, finished_at: '2027-04-01T03:00:00.000Z' });
    const event = (await events(t, tenant.id, 'schedule.run_finished')).find((e) => (e.data as { run: { id: string } }).run.id === failed.id)!;
    expect(event.data).toMatchObject({ schedule: { id: s.id, kind: 'discovery' }, run: { status: 'failed' } });

    // Finished runs are kept 90 days.
    const before = (await runsOf(s.id)).total;
    t.clock.set('2027-06-30T03:00:01.000Z');
    await call(t.app, await as(), { method: 'PATCH', url: url(tenant.id, `/${s.id}`), payload: { enabled: false }, expect: 200 });
    await dispatchSchedules(t.deps);
    expect((await runsOf(s.id)).total).toBe(before - 3);
  });
});
