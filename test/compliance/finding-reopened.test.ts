import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { buildReport, sendReport } from '../agents/helpers.js';

/**
 * A finding's reopenings (migration 0034): `reopened_at` (the last time a resolved finding was found
 * again, null when never) and `reopen_count`, written where the reopening happens (an audit, an
 * agent report) and answered by GET /findings/{id} and the lists.
 */

const HOUR = 3_600_000;

let t: TestApp;
let tenant: TenantFixture;
let token: string;
let agentKey: string;
let findingId: string;

beforeAll(async () => {
  t = await createTestApp({ clockStart: '2026-11-23T10:00:00.000Z' });
  tenant = await buildTenant(t);
  // An API key: sessions expire as the tests move the clock by hours.
  token = (await createApiKey(t, tenant, { permissions: ['admin:*'], workspace_id: tenant.defaultWorkspaceId })).key;
  const node = fixtureNode('aws-s3-bucket-versioning', 'violating', 'reopened-bucket');
  await putNodes(t, token, tenant.id, [node]);
  agentKey = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
  findingId = `aws-s3-bucket-versioning:${nodeIdOf(node)}`;
  await audit(t, token, tenant.id);
});
afterAll(() => t.close());

const api = (path: string) => `/api/v1/tenants/${tenant.id}${path}`;
const getFinding = async (id = findingId) => (await call(t.app, token, { url: api(`/findings/${encodeURIComponent(id)}`), expect: 200 })).json();
const listed = async (path: string, id = findingId) =>
  (await call(t.app, token, { url: api(`${path}${path.includes('?') ? '&' : '?'}status=all&per_page=500`), expect: 200 })).json().items.find((f: { id: string }) => f.id === id);
const resolve = (id = findingId) => call(t.app, token, { method: 'POST', url: api(`/findings/${encodeURIComponent(id)}/resolve`), payload: {}, expect: 200 });

describe('reopened_at and reopen_count', () => {
  it('a finding never reopened has reopened_at null and reopen_count 0', async () => {
    expect(await getFinding()).toMatchObject({ status: 'open', reopened_at: null, reopen_count: 0 });
    expect(await listed('/findings')).toMatchObject({ reopened_at: null, reopen_count: 0 });
  });

  it('a resolved finding found again by a later audit carries when it was reopened, in GET and in the lists', async () => {
    t.clock.advance(HOUR);
    const resolvedAt = t.clock.now().toISOString();
    expect((await resolve()).json()).toMatchObject({ status: 'resolved', resolved_at: resolvedAt, reopened_at: null, reopen_count: 0 });
    t.clock.advance(HOUR);
    const reopenedAt = t.clock.now().toISOString();
    const { run } = await audit(t, token, tenant.id);
    expect(run.stats.findings_reopened).toBe(1);

    const expected = { status: 'open', resolved_at: null, resolved_by: null, reopened_at: reopenedAt, reopen_count: 1, last_seen: reopenedAt };
    expect(await getFinding()).toMatchObject(expected);
    expect(await listed('/findings')).toMatchObject(expected);
    expect(await listed('/findings/scored')).toMatchObject(expected);
    // An audit that sees it still failing does not count it again.
    t.clock.advance(HOUR);
    await audit(t, token, tenant.id);
    expect(await getFinding()).toMatchObject({ reopened_at: reopenedAt, reopen_count: 1 });
  });

  it('resolving it again keeps its last reopening; the next reopening moves it and counts two', async () => {
    t.clock.advance(HOUR);
    const first = (await getFinding()).reopened_at;
    expect((await resolve()).json()).toMatchObject({ status: 'resolved', reopened_at: first, reopen_count: 1 });
    t.clock.advance(HOUR);
    const again = t.clock.now().toISOString();
    await audit(t, token, tenant.id);
    expect(await getFinding()).toMatchObject({ status: 'open', reopened_at: again, reopen_count: 2 });
  });
});

describe('reopened by an agent report', () => {
  const machine = 'reopen00000000000000000000000001';
  const host = { ...buildReport().host, machine_id: machine, hostname: machine };
  const id = `host-ssh-root-login:host:local:host.os.instance:${machine}`;
  const rootLogin = { config_checks: [{ id: 'sshd.permit_root_login', value: 'yes', source: '/etc/ssh/sshd_config:33' }] };
  const send = async (at: string, overrides = {}) => {
    const res = await sendReport(t, agentKey, 'agent-reopen', buildReport({ agent_id: 'agent-reopen', host, ...overrides }, at));
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('a host finding resolved by one report and shown again by the next carries reopened_at', async () => {
    await send('2026-11-23T12:00:00.000Z', rootLogin);
    expect(await getFinding(id)).toMatchObject({ status: 'open', reopened_at: null, reopen_count: 0 });
    t.clock.advance(HOUR);
    await send('2026-11-23T12:05:00.000Z');
    expect(await getFinding(id)).toMatchObject({ status: 'resolved', resolved_by: 'agent', reopened_at: null });
    t.clock.advance(HOUR);
    const reopenedAt = t.clock.now().toISOString();
    const body = await send('2026-11-23T12:10:00.000Z', rootLogin);
    expect(body.findings.reopened).toBe(1);
    expect(await getFinding(id)).toMatchObject({ status: 'open', resolved_at: null, reopened_at: reopenedAt, reopen_count: 1 });
    expect(await listed(`/findings?resource_id=${encodeURIComponent(`host:local:host.os.instance:${machine}`)}`, id)).toMatchObject({ reopened_at: reopenedAt, reopen_count: 1 });
  });
});
