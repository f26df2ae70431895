import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, loginAdmin, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { builtinRules } from '../../src/modules/compliance/rule-catalog.js';
import { checkReadModel } from '../../src/modules/compliance/rollups/consistency.js';
import { sweepExpired } from '../../src/modules/risk/acceptance-service.js';

/**
 * The findings read model (issue 23 item 1): rollups kept by triggers in the transaction of every
 * write. After each kind of write the consistency check (what `controlgraph check` runs) finds the
 * rollups equal to a recomputation from the rows, and the dashboards built on them agree with the
 * findings list, which counts the rows. With a trigger switched off, the check names the difference.
 */

let t: TestApp;
let tenant: TenantFixture;
let token: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
});
beforeEach(async () => {
  token = (await fresh(t, tenant.users['security-analyst'])).token;
});
afterAll(() => t.close());

const api = (path: string) => `/api/v1/tenants/${tenant.id}${path}`;
const get = async (path: string) => (await call(t.app, token, { url: api(path), expect: 200 })).json();
const findingUrl = (id: string) => api(`/findings/${encodeURIComponent(id)}`);
const rules = builtinRules().slice(0, 12);
const bad = (rule: (typeof rules)[number], n: string) => fixtureNode(rule.id, 'violating', `${rule.id}-${n}`);
const findingOf = (rule: (typeof rules)[number], n: string) => `${rule.id}:${nodeIdOf(bad(rule, n))}`;

/** Findings of the workspace by status as the list shows it (accepted while an acceptance covers it now), counted from the rows. */
async function countedFromRows(status: 'open' | 'accepted' | 'resolved' | 'all', severity?: string): Promise<number> {
  const now = t.clock.now();
  const accepted = sql<boolean>`(f.accepted_until IS NOT NULL AND f.accepted_until > ${now})`;
  const where = {
    open: sql<boolean>`f.status = 'open' AND NOT ${accepted}`,
    accepted: sql<boolean>`f.status = 'open' AND ${accepted}`,
    resolved: sql<boolean>`f.status = 'resolved'`,
    all: sql<boolean>`true`,
  }[status];
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM finding_rows f
    WHERE f.workspace_id = ${tenant.defaultWorkspaceId} AND ${where} AND ${severity ? sql`f.severity = ${severity}` : sql`true`}`.execute(t.deps.database.db);
  return rows[0]!.n;
}

/** The rollups equal their rows, and /controls/status, /findings/grouped and the list totals (all read from them) equal counts of the rows. */
async function expectExact() {
  const report = await checkReadModel(t.deps.database.db, { workspaceId: tenant.defaultWorkspaceId });
  expect(report.differences).toEqual([]);
  expect(report.consistent).toBe(true);
  const status = await get('/controls/status?per_page=1');
  expect(status.total_findings).toBe(await countedFromRows('open'));
  for (const severity of ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO']) {
    expect(status.by_severity[severity], severity).toBe(await countedFromRows('open', severity));
    expect((await get(`/findings?per_page=1&severity=${severity}`)).total, severity).toBe(await countedFromRows('open', severity));
  }
  for (const state of ['open', 'accepted', 'resolved', 'all'] as const) {
    const groups = await get(`/findings/grouped?per_page=500&status=${state}`);
    const counted = groups.items.reduce((n: number, g: { findings: number }) => n + g.findings, 0);
    expect(counted, state).toBe(await countedFromRows(state));
    expect((await get(`/findings?per_page=1&status=${state}`)).total, state).toBe(await countedFromRows(state));
  }
}

describe('the read model follows every write', () => {
  it('audits, resolve and reopen, acceptances (finding and group), revocation, expiry before and after the sweeper, unknowns, deletions', async () => {
    await putNodes(
      t,
      token,
      tenant.id,
      rules.flatMap((r) => [bad(r, 'a'), bad(r, 'b')]),
    );
    await audit(t, token, tenant.id);
    await expectExact();

    // Resolve by hand; the next audit reopens it (the resource still fails).
    const resolved = findingOf(rules[0]!, 'a');
    await call(t.app, token, { method: 'POST', url: `${findingUrl(resolved)}/resolve`, payload: {}, expect: 200 });
    await expectExact();
    await audit(t, token, tenant.id);
    expect((await get(`/findings/${encodeURIComponent(resolved)}`)).status).toBe('open');
    await expectExact();

    // A single-finding acceptance, then its revocation.
    const accepted = findingOf(rules[1]!, 'a');
    const body = (expires: Date) => ({ owner: 'team', reason: 'compensating control in place', expires_at: expires.toISOString() });
    await call(t.app, token, { method: 'POST', url: `${findingUrl(accepted)}/accept`, payload: body(new Date(t.clock.now().getTime() + 86_400_000)), expect: 201 });
    expect((await get('/findings?per_page=1&status=accepted')).total).toBe(1);
    await expectExact();
    await call(t.app, token, { method: 'DELETE', url: `${findingUrl(accepted)}/accept`, expect: 200 });
    await expectExact();

    // A group acceptance that expires: the findings count again at its exact moment, before the
    // sweeper records the expiry, and after it.
    const grouped = findingOf(rules[2]!, 'a');
    const groupId = (await get(`/findings/${encodeURIComponent(grouped)}`)).group_id as string;
    const expires = new Date(t.clock.now().getTime() + 60_000);
    await call(t.app, token, { method: 'POST', url: api(`/findings/groups/${groupId}/accept`), payload: body(expires), expect: 201 });
    const covered = (await get('/findings?per_page=1&status=accepted')).total;
    expect(covered).toBeGreaterThan(0);
    await expectExact();
    const activeBefore = (await get('/controls/status?per_page=1')).total_findings;
    t.clock.set(expires);
    token = (await fresh(t, tenant.users['security-analyst'])).token;
    expect((await get('/controls/status?per_page=1')).total_findings).toBe(activeBefore + covered);
    await expectExact();
    expect(await sweepExpired(t.deps)).toBe(1);
    expect((await get('/controls/status?per_page=1')).total_findings).toBe(activeBefore + covered);
    await expectExact();

    // Unknown outcomes: a bare security group lacks what its rules read, and no default decides them.
    const bareGroup = {
      provider: 'aws',
      region: 'eu-west-1',
      type: 'aws.ec2.security_group',
      native_id: 'sg-bare',
      name: 'sg-bare',
      account_id: '123456789012',
      properties: { configuration: { name: 'sg-bare' } },
      tags: {},
    };
    await putNodes(t, token, tenant.id, [bareGroup]);
    const { run } = await audit(t, token, tenant.id);
    const status = await get('/controls/status?per_page=1');
    expect(run.stats.unknown).toBeGreaterThan(0);
    expect(status.unknown.evaluations).toBeGreaterThan(0);
    expect(status.unknown.resources).toBe(1);
    await expectExact();

    // Deleting nodes resolves their findings and clears their unknowns.
    for (const node of [bad(rules[3]!, 'a'), bareGroup]) {
      await call(t.app, token, { method: 'DELETE', url: api(`/nodes/${encodeURIComponent(nodeIdOf(node))}`), expect: 204 });
    }
    await audit(t, token, tenant.id);
    expect((await get('/controls/status?per_page=1')).unknown).toMatchObject({ evaluations: 0, resources: 0 });
    await expectExact();
  });
});

describe('the consistency check', () => {
  it('names the difference a write that skipped the read model leaves, and --repair rebuilds it (audit-logged)', async () => {
    const db = t.deps.database.db;
    const target = findingOf(rules[4]!, 'b');
    expect((await get(`/findings/${encodeURIComponent(target)}`)).status).toBe('open');
    await sql`ALTER TABLE finding_rows DISABLE TRIGGER finding_rows_rollup_update`.execute(db);
    try {
      await call(t.app, token, { method: 'POST', url: `${findingUrl(target)}/resolve`, payload: {}, expect: 200 });
    } finally {
      await sql`ALTER TABLE finding_rows ENABLE TRIGGER finding_rows_rollup_update`.execute(db);
    }
    const admin = await loginAdmin(t);
    const checked = (await call(t.app, admin.token, { method: 'POST', url: '/api/v1/system/read-model/check', expect: 200 })).json();
    expect(checked.consistent).toBe(false);
    const rule = rules[4]!;
    expect(checked.differences).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          rollup: 'finding_rollup',
          workspace_id: tenant.defaultWorkspaceId,
          key: expect.objectContaining({ rule_id: rule.id, state: 'resolved' }),
          stored: expect.any(Number),
        }),
        expect.objectContaining({ rollup: 'finding_group_rollup', workspace_id: tenant.defaultWorkspaceId, key: expect.objectContaining({ state: 'open' }) }),
      ]),
    );
    const repaired = (
      await call(t.app, admin.token, { method: 'POST', url: `/api/v1/system/read-model/check?repair=true&workspace_id=${tenant.defaultWorkspaceId}`, expect: 200 })
    ).json();
    expect(repaired).toMatchObject({ consistent: false, repaired: 1 });
    const again = (await call(t.app, admin.token, { method: 'POST', url: '/api/v1/system/read-model/check', expect: 200 })).json();
    expect(again).toMatchObject({ consistent: true, difference_count: 0, differences: [], repaired: 0 });
    await expectExact();
    const logged = await db.selectFrom('audit_logs').select(['action', 'details']).where('action', '=', 'read_model.repaired').execute();
    expect(logged).toHaveLength(1);
  });

  it('the unknowns rollup too: an evaluation_unknowns write without its trigger is a difference', async () => {
    const db = t.deps.database.db;
    await sql`ALTER TABLE evaluation_unknowns DISABLE TRIGGER evaluation_unknowns_rollup_insert`.execute(db);
    try {
      await db
        .insertInto('evaluation_unknowns')
        .values({
          tenant_id: tenant.id,
          workspace_id: tenant.defaultWorkspaceId,
          resource_id: 'aws:eu-west-1:aws.s3.bucket:x',
          rule_id: rules[0]!.id,
          resource_type: 'aws.s3.bucket',
          resource_name: 'x',
          region: 'eu-west-1',
          account_id: '',
          framework: 'x',
          control_id: 'y',
          text_id: 'z',
          reason: 'evaluation_error',
          first_seen: t.clock.now(),
          last_seen: t.clock.now(),
        })
        .execute();
    } finally {
      await sql`ALTER TABLE evaluation_unknowns ENABLE TRIGGER evaluation_unknowns_rollup_insert`.execute(db);
    }
    const report = await checkReadModel(db, { workspaceId: tenant.defaultWorkspaceId });
    expect(report.differences.map((d) => d.rollup).sort()).toEqual(['unknown_resource_rollup', 'unknown_rollup', 'unknown_workspace_rollup']);
    await db.deleteFrom('evaluation_unknowns').where('resource_id', '=', 'aws:eu-west-1:aws.s3.bucket:x').execute();
    // The delete went through the trigger: it took away what the insert never added.
    expect((await checkReadModel(db, { workspaceId: tenant.defaultWorkspaceId, repair: true })).repaired).toBe(1);
    expect((await checkReadModel(db)).consistent).toBe(true);
  });

  it('needs a system-admin; refuses a malformed workspace id', async () => {
    expect((await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/system/read-model/check' })).statusCode).toBe(403);
    expect((await call(t.app, null, { method: 'POST', url: '/api/v1/system/read-model/check' })).statusCode).toBe(401);
    const admin = await loginAdmin(t);
    const res = await call(t.app, admin.token, { method: 'POST', url: '/api/v1/system/read-model/check?workspace_id=nope' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('workspace_id');
  });

  it('a deleted tenant takes its rollups with it', async () => {
    const other = await buildTenant(t);
    const otherToken = other.users['security-analyst'].token;
    await putNodes(t, otherToken, other.id, [fixtureNode(rules[0]!.id, 'violating', 'gone')]);
    await audit(t, otherToken, other.id);
    const admin = await loginAdmin(t);
    await call(t.app, admin.token, { method: 'DELETE', url: `/api/v1/tenants/${other.id}` });
    const left = await t.deps.database.db.selectFrom('finding_rollup').select('workspace_id').where('workspace_id', '=', other.defaultWorkspaceId).execute();
    expect(left).toEqual([]);
    expect((await checkReadModel(t.deps.database.db)).consistent).toBe(true);
  });
});
