import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, events, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { sweepExpired } from '../../src/modules/risk/acceptance-service.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let token: string;
const RULE = 'aws-s3-bucket-versioning';
const bucket = (name: string, region = 'us-east-1') => ({ ...fixtureNode(RULE, 'violating', name), region });
const findingOf = (name: string, region = 'us-east-1') => `${RULE}:${nodeIdOf(bucket(name, region))}`;
const DAY = 86_400_000;
const inDays = (days: number) => new Date(t.clock.now().getTime() + days * DAY).toISOString();
const body = (overrides: Record<string, unknown> = {}) => ({ reason: 'compensating control: bucket is write-once', owner: 'storage-team', expires_at: inDays(30), ...overrides });

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
  await putNodes(t, token, tenant.id, [bucket('b1'), bucket('b2'), bucket('b3'), bucket('solo', 'eu-north-1')]);
  await audit(t, token, tenant.id);
});
afterAll(() => t.close());
beforeEach(async () => {
  // Fixture tokens live an hour; tests move the clock.
  token = (await fresh(t, tenant.users['security-analyst'])).token;
});

const findingUrl = (id: string) => `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}`;
const accept = (id: string, payload: Record<string, unknown>, as = token) => call(t.app, as, { method: 'POST', url: `${findingUrl(id)}/accept`, payload });
const revoke = (id: string, as = token) => call(t.app, as, { method: 'DELETE', url: `${findingUrl(id)}/accept` });
const groupUrl = (group: string) => `/api/v1/tenants/${tenant.id}/findings/groups/${group}/accept`;
const statusOf = async (id: string) => (await call(t.app, token, { url: findingUrl(id), expect: 200 })).json().status;
const groupIdOf = async (id: string) => (await call(t.app, token, { url: findingUrl(id), expect: 200 })).json().group_id as string;

describe('POST /findings/{id}/accept', () => {
  it('201 with scope, finding_id, group_id, group_label, owner, reason, expires_at, state and snapshot; the finding is accepted', async () => {
    const id = findingOf('solo', 'eu-north-1');
    const res = await accept(id, body());
    expect(res.statusCode).toBe(201);
    const a = res.json();
    expect(a).toMatchObject({
      scope: 'finding',
      finding_id: id,
      group_id: await groupIdOf(id),
      group_label: expect.stringContaining('(1 resource)'),
      owner: 'storage-team',
      reason: 'compensating control: bucket is write-once',
      state: 'active',
      orphaned: false,
    });
    expect(a.snapshot.finding_ids).toEqual([id]);
    expect(a.snapshot.resource_ids).toEqual([nodeIdOf(bucket('solo', 'eu-north-1'))]);
    expect(a.snapshot.controls.length).toBeGreaterThan(0);
    expect(await statusOf(id)).toBe('accepted');
    const accepted = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings?status=accepted`, expect: 200 });
    expect(accepted.json().items.map((f: { id: string; status: string }) => [f.id, f.status])).toEqual([[id, 'accepted']]);
    const open = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings?per_page=500`, expect: 200 });
    expect(open.json().items.map((f: { id: string }) => f.id)).not.toContain(id);
    const event = (await events(t, tenant.id, 'finding.risk_accepted')).at(-1)!;
    expect(event.data).toMatchObject({ finding_id: id, acceptance_id: a.id, scope: 'finding', owner: 'storage-team' });
  });

  it('400: reason or owner missing, expires_at past or more than 365 days out', async () => {
    const id = findingOf('b1');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ reason: undefined }, 'reason is required'],
      [{ reason: '   ' }, 'reason is required'],
      [{ owner: undefined }, 'owner is required'],
      [{ expires_at: undefined }, 'expires_at is required'],
      [{ expires_at: inDays(-1) }, 'expires_at must be in the future'],
      [{ expires_at: inDays(366) }, 'expires_at must be at most 365 days in the future'],
      [{ expires_at: 'next tuesday' }, 'expires_at must be an ISO 8601 timestamp'],
    ];
    for (const [overrides, message] of cases) {
      const payload = body(overrides);
      for (const key of Object.keys(overrides)) if (overrides[key] === undefined) delete (payload as Record<string, unknown>)[key];
      const res = await accept(id, payload);
      expect(res.statusCode, message).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'BAD_REQUEST', message });
    }
    expect((await accept(id, body({ expires_at: inDays(365) }))).statusCode).toBe(201);
    expect((await revoke(id)).statusCode).toBe(200);
  });

  it('400 for a finding that is not active (resolved)', async () => {
    const id = findingOf('b3');
    await call(t.app, token, { method: 'POST', url: `${findingUrl(id)}/resolve`, payload: {}, expect: 200 });
    const res = await accept(id, body());
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/not active/);
    await audit(t, token, tenant.id); // the violation is still there: reopened
    expect(await statusOf(id)).toBe('open');
  });

  it('403 for a role without audit:run', async () => {
    const res = await accept(findingOf('b1'), body(), tenant.users.auditor.token);
    expect(res.statusCode).toBe(403);
  });

  it('404 for an unknown finding and for a finding of another tenant', async () => {
    expect((await accept('aws-s3-bucket-versioning:aws:x:aws.s3.bucket:nope', body())).statusCode).toBe(404);
    const foreign = await call(t.app, other.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${other.id}/findings/${encodeURIComponent(findingOf('b1'))}/accept`,
      payload: body(),
    });
    expect(foreign.statusCode).toBe(404);
    expect((await call(t.app, other.admin.token, { method: 'POST', url: `${findingUrl(findingOf('b1'))}/accept`, payload: body() })).statusCode).toBe(403);
  });

  it('409 when already accepted individually', async () => {
    const id = findingOf('solo', 'eu-north-1');
    const res = await accept(id, body());
    expect(res.statusCode).toBe(409);
    expect(res.json().error.message).toBe('finding is already accepted');
  });
});

describe('group acceptance', () => {
  let group: string;
  beforeAll(async () => {
    const s = (await fresh(t, tenant.users['security-analyst'])).token;
    group = (await call(t.app, s, { url: findingUrl(findingOf('b1')), expect: 200 })).json().group_id;
  });

  it('201 covers the open findings of the group present now, with the snapshot', async () => {
    const res = await call(t.app, token, { method: 'POST', url: groupUrl(group), payload: body() });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ scope: 'group', finding_id: null, group_id: group, state: 'active' });
    expect(res.json().snapshot.finding_ids).toEqual([findingOf('b1'), findingOf('b2'), findingOf('b3')].sort());
    for (const name of ['b1', 'b2', 'b3']) expect(await statusOf(findingOf(name))).toBe('accepted');
  });

  it('409 for a finding accepted through its group, and for a group with a live acceptance', async () => {
    const res = await accept(findingOf('b1'), body());
    expect(res.statusCode).toBe(409);
    expect(res.json().error.message).toBe('finding is already accepted through its group');
    const again = await call(t.app, token, { method: 'POST', url: groupUrl(group), payload: body() });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.message).toBe('the group already has a live acceptance');
  });

  it('404 for an unknown group; 400 for a bad body', async () => {
    expect((await call(t.app, token, { method: 'POST', url: groupUrl('grp_unknown'), payload: body() })).statusCode).toBe(404);
    expect((await call(t.app, token, { method: 'POST', url: groupUrl(group), payload: body({ owner: '' }) })).statusCode).toBe(400);
  });

  it('a finding that appears after the acceptance is not covered: the group reports partial', async () => {
    await putNodes(t, token, tenant.id, [bucket('b4')]);
    await audit(t, token, tenant.id);
    expect(await statusOf(findingOf('b4'))).toBe('open');
    const list = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/risk-acceptances?scope=group`, expect: 200 });
    expect(list.json().items[0]).toMatchObject({ group_id: group, state: 'partial' });
  });

  it('single and group acceptances are independent: revoking one never changes the other', async () => {
    const single = await accept(findingOf('b4'), body());
    expect(single.statusCode).toBe(201);
    const revokedGroup = await call(t.app, token, { method: 'DELETE', url: groupUrl(group) });
    expect(revokedGroup.statusCode).toBe(200);
    expect(revokedGroup.json()).toMatchObject({ scope: 'group', state: 'revoked', revoked_by: `user:${tenant.users['security-analyst'].user_id}` });
    expect(await statusOf(findingOf('b4'))).toBe('accepted');
    expect(await statusOf(findingOf('b1'))).toBe('open');
    const ended = (await events(t, tenant.id, 'finding.risk_acceptance_ended')).filter((e) => (e.data as { acceptance_id: string }).acceptance_id === revokedGroup.json().id);
    expect(ended.map((e) => (e.data as { finding_id: string }).finding_id).sort()).toEqual([findingOf('b1'), findingOf('b2'), findingOf('b3')].sort());
    expect(ended[0]!.data).toMatchObject({ reason: 'revoked' });
    // A new group acceptance now, then revoking the single one leaves the group's coverage alone.
    await call(t.app, token, { method: 'POST', url: groupUrl(group), payload: body(), expect: 201 });
    expect((await revoke(findingOf('b4'))).json().state).toBe('revoked');
    expect(await statusOf(findingOf('b4'))).toBe('accepted');
  });

  it('DELETE answers 404 when no unrevoked acceptance of that scope exists', async () => {
    expect((await revoke(findingOf('b4'))).statusCode).toBe(404);
    expect((await revoke(findingOf('b2'))).statusCode).toBe(404);
    await call(t.app, token, { method: 'DELETE', url: groupUrl(group), expect: 200 });
    expect((await call(t.app, token, { method: 'DELETE', url: groupUrl(group) })).statusCode).toBe(404);
  });
});

describe('expiry', () => {
  it('expires at the exact moment: the finding is open again at expires_at; the sweeper records it once', async () => {
    const id = findingOf('b2');
    const expiresAt = new Date(t.clock.now().getTime() + 60_000);
    const res = await accept(id, body({ expires_at: expiresAt.toISOString() }));
    expect(res.statusCode).toBe(201);
    t.clock.set(new Date(expiresAt.getTime() - 1));
    expect(await statusOf(id)).toBe('accepted');
    t.clock.set(expiresAt);
    expect(await statusOf(id)).toBe('open');
    const got = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/risk-acceptances/${res.json().id}`, expect: 200 });
    expect(got.json().state).toBe('expired');
    expect(await sweepExpired(t.deps)).toBe(1);
    expect(await sweepExpired(t.deps)).toBe(0);
    const ended = (await events(t, tenant.id, 'finding.risk_acceptance_ended')).filter((e) => (e.data as { acceptance_id: string }).acceptance_id === res.json().id);
    expect(ended.map((e) => e.data)).toEqual([{ finding_id: id, acceptance_id: res.json().id, reason: 'expired', ended_at: expiresAt.toISOString() }]);
    const log = await call(t.app, (await fresh(t, tenant.admin)).token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=risk.expired`, expect: 200 });
    expect(log.json().items[0]).toMatchObject({ actor_type: 'system', details: { acceptance_id: res.json().id } });
    // An expired acceptance does not block a new one.
    expect((await accept(id, body())).statusCode).toBe(201);
  });

  it('the scheduled sweeper job runs through the queue', async () => {
    const id = findingOf('b3');
    const res = await accept(id, body({ expires_at: inDays(1) }));
    expect(res.statusCode).toBe(201);
    t.clock.advance(DAY + 1000);
    const { Scheduler } = await import('../../src/platform/jobs/scheduler.js');
    const scheduler = new Scheduler({
      db: t.deps.database.db,
      clock: t.clock,
      log: t.deps.log,
      schedules: [{ name: 'risk-expiry-sweeper', kind: 'risk.record-expiries', intervalMs: 60_000 }],
    });
    await scheduler.register();
    await scheduler.tick();
    await t.drain();
    const row = await t.deps.database.db.selectFrom('risk_acceptances').select('expiry_recorded_at').where('id', '=', res.json().id).executeTakeFirstOrThrow();
    expect(row.expiry_recorded_at).not.toBeNull();
  });
});

describe('GET /risk-acceptances', () => {
  it('newest first, paged, with the counts; orphaned when all snapshot findings are resolved', async () => {
    const id = findingOf('b1');
    t.clock.advance(1000);
    const accepted = await accept(id, body());
    expect(accepted.statusCode).toBe(201);
    await call(t.app, token, { method: 'POST', url: `${findingUrl(id)}/resolve`, payload: {}, expect: 200 });
    const readOnly = await fresh(t, tenant.users['read-only']);
    const res = await call(t.app, readOnly.token, { url: `/api/v1/tenants/${tenant.id}/risk-acceptances?per_page=2`, expect: 200 });
    const listBody = res.json();
    expect(listBody.items[0]).toMatchObject({ id: accepted.json().id, state: 'active', orphaned: true });
    expect(listBody.items).toHaveLength(2);
    const all = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/risk-acceptances?per_page=500`, expect: 200 })).json();
    const states = all.items.map((a: { state: string }) => a.state);
    expect(listBody.counts).toEqual({
      total: all.items.length,
      active: states.filter((s: string) => s === 'active' || s === 'partial').length,
      expired: states.filter((s: string) => s === 'expired').length,
      revoked: states.filter((s: string) => s === 'revoked').length,
      orphaned: all.items.filter((a: { orphaned: boolean }) => a.orphaned).length,
    });
    expect(listBody.counts.orphaned).toBeGreaterThanOrEqual(1);
    expect(listBody).toMatchObject({ active: listBody.counts.active, revoked: listBody.counts.revoked, total: all.items.length });
    expect(all.total).toBe(all.counts.total);
    const created = all.items.map((a: { created_at: string }) => a.created_at);
    expect([...created].sort().reverse()).toEqual(created);
  });

  it('filters by state, scope and owner', async () => {
    const revoked = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/risk-acceptances?state=revoked`, expect: 200 })).json();
    expect(revoked.items.every((a: { state: string }) => a.state === 'revoked')).toBe(true);
    expect(revoked.total).toBe(revoked.counts.revoked);
    const orphaned = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/risk-acceptances?state=orphaned`, expect: 200 })).json();
    expect(orphaned.items.every((a: { orphaned: boolean }) => a.orphaned)).toBe(true);
    const groups = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/risk-acceptances?scope=group`, expect: 200 })).json();
    expect(groups.items.every((a: { scope: string }) => a.scope === 'group')).toBe(true);
    const byOwner = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/risk-acceptances?owner=nobody`, expect: 200 })).json();
    expect(byOwner.total).toBe(0);
    expect((await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/risk-acceptances?state=weird` })).statusCode).toBe(400);
  });

  it('every change is in the audit log with who did it', async () => {
    const admin = await fresh(t, tenant.admin);
    const log = await call(t.app, admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=risk.*&per_page=500`, expect: 200 });
    const actions = new Set(log.json().items.map((e: { action: string }) => e.action));
    expect(actions).toEqual(new Set(['risk.accepted', 'risk.revoked', 'risk.expired']));
    const accepted = log.json().items.find((e: { action: string }) => e.action === 'risk.accepted');
    expect(accepted.actor_id).toBe(tenant.users['security-analyst'].user_id);
  });
});

describe('accepted findings and scores', () => {
  it('are left out of active counts and scores in /controls/status', async () => {
    const before = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/controls/status`, expect: 200 })).json();
    const open = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings?rule_id=${RULE}&per_page=500`, expect: 200 })).json();
    expect(open.total).toBeGreaterThan(0);
    const severity = open.items[0].severity as string;
    for (const f of open.items as Array<{ id: string }>) expect((await accept(f.id, body())).statusCode).toBe(201);
    const after = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/controls/status`, expect: 200 })).json();
    expect(after.total_findings).toBe(before.total_findings - open.total);
    expect(after.by_severity[severity]).toBe(before.by_severity[severity] - open.total);
    // Nothing else fails this rule's controls here, so accepting its findings passes them again.
    expect(after.overall_score).toBeGreaterThan(before.overall_score);
  });
});

describe('group acceptance: permissions, already-accepted groups, expiry, orphaned and state filters', () => {
  const groupOf = (region: string) => groupIdOf(findingOf(`${region}-1`, region));
  const listUrl = (query: string) => `/api/v1/tenants/${tenant.id}/risk-acceptances?${query}`;
  beforeAll(async () => {
    const s = (await fresh(t, tenant.users['security-analyst'])).token;
    const regions = ['ap-south-1', 'sa-east-1', 'ca-central-1', 'me-south-1'];
    await putNodes(
      t,
      s,
      tenant.id,
      regions.flatMap((r) => [bucket(`${r}-1`, r), bucket(`${r}-2`, r)]),
    );
    await audit(t, s, tenant.id);
  });

  it('403 on POST and DELETE without audit:run', async () => {
    const group = await groupOf('ap-south-1');
    const readOnly = (await fresh(t, tenant.users['read-only'])).token;
    for (const method of ['POST', 'DELETE'] as const) {
      const res = await call(t.app, readOnly, { method, url: groupUrl(group), payload: method === 'POST' ? body() : undefined });
      expect(res.statusCode, method).toBe(403);
      expect(res.json().error.code).toBe('FORBIDDEN');
    }
  });

  it('404 for an already-accepted group: every open finding has its own live acceptance', async () => {
    const region = 'ap-south-1';
    const group = await groupOf(region);
    for (const n of [1, 2]) expect((await accept(findingOf(`${region}-${n}`, region), body())).statusCode).toBe(201);
    const res = await call(t.app, token, { method: 'POST', url: groupUrl(group), payload: body() });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toBe('finding group is already accepted: every open finding has a live acceptance');
    // Once one single acceptance is revoked the group can be accepted again.
    await revoke(findingOf(`${region}-2`, region));
    expect((await call(t.app, token, { method: 'POST', url: groupUrl(group), payload: body() })).statusCode).toBe(201);
  });

  it('a group acceptance expires at its moment: its findings are open again and the sweeper ends them with reason expired', async () => {
    const region = 'sa-east-1';
    const group = await groupOf(region);
    const expiresAt = new Date(t.clock.now().getTime() + 60_000);
    const res = await call(t.app, token, { method: 'POST', url: groupUrl(group), payload: body({ expires_at: expiresAt.toISOString() }) });
    expect(res.statusCode).toBe(201);
    const ids = [findingOf(`${region}-1`, region), findingOf(`${region}-2`, region)];
    t.clock.set(new Date(expiresAt.getTime() - 1));
    for (const id of ids) expect(await statusOf(id)).toBe('accepted');
    t.clock.set(expiresAt);
    token = (await fresh(t, tenant.users['security-analyst'])).token;
    for (const id of ids) expect(await statusOf(id)).toBe('open');
    const expired = (await call(t.app, token, { url: listUrl('state=expired&scope=group'), expect: 200 })).json();
    expect(expired.items.map((a: { id: string }) => a.id)).toContain(res.json().id);
    expect(expired.items.every((a: { state: string; scope: string }) => a.state === 'expired' && a.scope === 'group')).toBe(true);
    expect(await sweepExpired(t.deps)).toBeGreaterThanOrEqual(1);
    const ended = (await events(t, tenant.id, 'finding.risk_acceptance_ended')).filter((e) => (e.data as { acceptance_id: string }).acceptance_id === res.json().id);
    expect(ended.map((e) => (e.data as { finding_id: string }).finding_id).sort()).toEqual([...ids].sort());
    expect(ended.every((e) => (e.data as { reason: string }).reason === 'expired')).toBe(true);
  });

  it('a live group acceptance whose snapshot findings are all resolved is orphaned', async () => {
    const region = 'ca-central-1';
    const group = await groupOf(region);
    const res = await call(t.app, token, { method: 'POST', url: groupUrl(group), payload: body() });
    expect(res.statusCode).toBe(201);
    for (const n of [1, 2]) {
      await call(t.app, token, { method: 'POST', url: `${findingUrl(findingOf(`${region}-${n}`, region))}/resolve`, payload: {}, expect: 200 });
    }
    const got = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/risk-acceptances/${res.json().id}`, expect: 200 })).json();
    expect(got).toMatchObject({ state: 'active', orphaned: true });
    const orphaned = (await call(t.app, token, { url: listUrl('state=orphaned&scope=group'), expect: 200 })).json();
    expect(orphaned.items.map((a: { id: string }) => a.id)).toContain(res.json().id);
  });

  it('state=active lists every live acceptance (partial ones too, as the counts do); state=partial only the partial', async () => {
    const region = 'me-south-1';
    const group = await groupOf(region);
    const res = await call(t.app, token, { method: 'POST', url: groupUrl(group), payload: body() });
    expect(res.statusCode).toBe(201);
    const active = (await call(t.app, token, { url: listUrl('state=active&per_page=500'), expect: 200 })).json();
    expect(active.items.map((a: { id: string }) => a.id)).toContain(res.json().id);
    expect(active.items.every((a: { state: string }) => a.state === 'active' || a.state === 'partial')).toBe(true);
    expect(active.items.find((a: { id: string }) => a.id === res.json().id).state).toBe('active');
    await putNodes(t, token, tenant.id, [bucket(`${region}-3`, region)]);
    await audit(t, token, tenant.id);
    const partial = (await call(t.app, token, { url: listUrl('state=partial'), expect: 200 })).json();
    expect(partial.items.map((a: { id: string }) => a.id)).toContain(res.json().id);
    expect(partial.items.every((a: { state: string }) => a.state === 'partial')).toBe(true);
    const activeNow = (await call(t.app, token, { url: listUrl('state=active&per_page=500'), expect: 200 })).json();
    expect(activeNow.items.find((a: { id: string }) => a.id === res.json().id).state).toBe('partial');
    const expired = (await call(t.app, token, { url: listUrl('state=expired&per_page=500'), expect: 200 })).json();
    expect(expired.items.map((a: { id: string }) => a.id)).not.toContain(res.json().id);
  });
});
