import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, events, fixtureNode } from '../harness/compliance.js';
import { builtinRules } from '../../src/modules/compliance/rule-catalog.js';
import { reconcileKevSeverities } from '../../src/modules/vulndb/escalation.js';
import { sweepSlaBreaches } from '../../src/modules/compliance/sla/sla-breach-job.js';
import { Scheduler } from '../../src/platform/jobs/scheduler.js';
import { testDns } from '../integrations/helpers.js';

const HOUR = 3_600_000;
const DEFAULTS = { CRITICAL: 24, HIGH: 48, MEDIUM: 336, LOW: 2160, INFO: null } as Record<string, number | null>;

interface Finding {
  id: string;
  severity: string;
  status: string;
  created_at: string;
  due_at: string | null;
}

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
// API keys: sessions expire when the tests move the clock by days.
let key: string;
let otherKey: string;
let t0: number;

const api = (tenantId: string) => `/api/v1/tenants/${tenantId}`;
const get = (token: string, url: string) => call(t.app, token, { url });
const putSettings = (payload: Record<string, unknown>, token = key, tenantId = tenant.id) =>
  call(t.app, token, { method: 'PUT', url: `${api(tenantId)}/settings/compliance`, payload });
const allOpen = async (token = key, tenantId = tenant.id): Promise<Finding[]> =>
  (await call(t.app, token, { url: `${api(tenantId)}/findings?per_page=500`, expect: 200 })).json().items;
const finding = async (id: string, token = key, tenantId = tenant.id): Promise<Finding> =>
  (await call(t.app, token, { url: `${api(tenantId)}/findings/${encodeURIComponent(id)}`, expect: 200 })).json();
const plusHours = (iso: string | number, hours: number | null) => (hours === null ? null : new Date(new Date(iso).getTime() + hours * HOUR).toISOString());

const customRule = (severity: string) => ({
  id: 'custom-sla-bucket',
  title: 'Bucket name has no "sla"',
  description: 'A rule for the SLA tests.',
  severity,
  resource_type: 'aws.s3.bucket',
  framework: 'soc2',
  control_id: 'CC6.1',
  framework_mappings: [],
  condition: "resource.name.contains('sla')",
  remediation: 'Rename it.',
});

beforeAll(async () => {
  // Webhook targets are resolved by the tests' DNS (no real lookups).
  t = await createTestApp({ config: { outboundLookup: testDns } });
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  key = (await createApiKey(t, tenant, { permissions: ['admin:*'], workspace_id: tenant.defaultWorkspaceId })).key;
  otherKey = (await createApiKey(t, other, { permissions: ['admin:*'], workspace_id: other.defaultWorkspaceId })).key;
  t0 = t.clock.now().getTime();
  const nodes = builtinRules().map((r) => fixtureNode(r.id, 'violating', `${r.id}-bad`));
  await putNodes(t, key, tenant.id, nodes);
  await putNodes(t, otherKey, other.id, nodes);
  await audit(t, key, tenant.id);
  await audit(t, otherKey, other.id);
});
afterAll(() => t.close());

describe('due_at of a finding', () => {
  it('is created_at plus the default window of its severity (CRITICAL 24 h, HIGH 48 h, MEDIUM 14 d, LOW 90 d); INFO has none', async () => {
    const open = await allOpen();
    const severities = new Set(open.map((f) => f.severity));
    for (const s of ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW']) expect(severities.has(s), s).toBe(true);
    for (const f of open) expect(f.due_at, `${f.id} ${f.severity}`).toBe(plusHours(f.created_at, DEFAULTS[f.severity]!));
    // GET /findings/{id} shows it too.
    const one = open.find((f) => f.severity === 'HIGH')!;
    expect((await finding(one.id)).due_at).toBe(plusHours(t0, 48));
  });

  it('is set by the database for a writer that does not compute it (as the agent ingest inserts rows)', async () => {
    const db = t.deps.database.db;
    const [text] = (await sql<{ text_id: string }>`SELECT text_id FROM finding_rows WHERE workspace_id = ${tenant.defaultWorkspaceId} LIMIT 1`.execute(db)).rows;
    const at = new Date(t0 + 5 * HOUR);
    await sql`
      INSERT INTO finding_rows (tenant_id, workspace_id, id, rule_id, framework, control_id, base_severity, severity, status, text_id,
        resource_id, resource_type, resource_name, region, group_id, first_seen, last_seen, created_at, updated_at)
      VALUES (${tenant.id}, ${tenant.defaultWorkspaceId}, 'host-rule:host:web-1', 'host-rule', 'nist-800-53', 'RA-5', 'HIGH', 'HIGH', 'open', ${text!.text_id},
        'host:web-1', 'host', 'web-1', 'eu-west-1', 'g1', ${at}, ${at}, ${at}, ${at})`.execute(db);
    expect((await finding('host-rule:host:web-1')).due_at).toBe(plusHours(at.toISOString(), 48));
    await sql`DELETE FROM finding_rows WHERE workspace_id = ${tenant.defaultWorkspaceId} AND id = 'host-rule:host:web-1'`.execute(db);
  });

  it('GET /settings/compliance shows the windows per severity', async () => {
    const res = await get(key, `${api(tenant.id)}/settings/compliance`);
    expect(res.statusCode).toBe(200);
    expect(res.json().sla).toEqual(DEFAULTS);
    expect(res.json().frameworks.length).toBeGreaterThan(0);
  });
});

describe('PUT /settings/compliance {sla}', () => {
  it('400 for a window that is not a whole number of hours from 1 to 87,600, an unknown severity or an empty change', async () => {
    for (const [payload, words] of [
      [{ sla: { HIGH: 0 } }, '/sla/HIGH must be >= 1'],
      [{ sla: { HIGH: 87_601 } }, '/sla/HIGH must be <= 87600'],
      [{ sla: { HIGH: 1.5 } }, '/sla/HIGH must be integer'],
      [{ sla: { URGENT: 5 } }, 'must NOT have additional properties'],
      [{ sla: {} }, '/sla must NOT have fewer than 1 properties'],
      [{}, 'must NOT have fewer than 1 properties'],
    ] as const) {
      const res = await putSettings(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.message, JSON.stringify(payload)).toContain(words);
    }
    expect((await get(key, `${api(tenant.id)}/settings/compliance`)).json().sla).toEqual(DEFAULTS);
  });

  it("overrides a tenant's windows and moves the due time of its open findings; another tenant keeps the defaults", async () => {
    const res = await putSettings({ sla: { HIGH: 12, INFO: 720 } });
    expect(res.statusCode).toBe(200);
    expect(res.json().sla).toEqual({ ...DEFAULTS, HIGH: 12, INFO: 720 });
    for (const f of await allOpen()) {
      const hours = f.severity === 'HIGH' ? 12 : f.severity === 'INFO' ? 720 : DEFAULTS[f.severity]!;
      expect(f.due_at, `${f.id} ${f.severity}`).toBe(plusHours(f.created_at, hours));
    }
    // Tenant isolation: the other tenant's setting and findings are untouched.
    expect((await get(otherKey, `${api(other.id)}/settings/compliance`)).json().sla).toEqual(DEFAULTS);
    for (const f of await allOpen(otherKey, other.id)) expect(f.due_at).toBe(plusHours(f.created_at, DEFAULTS[f.severity]!));
    // Its own override changes nothing here either.
    expect((await putSettings({ sla: { CRITICAL: 2 } }, otherKey, other.id)).json().sla.CRITICAL).toBe(2);
    expect((await get(key, `${api(tenant.id)}/settings/compliance`)).json().sla.CRITICAL).toBe(24);
    expect((await putSettings({ sla: { CRITICAL: null } }, otherKey, other.id)).json().sla.CRITICAL).toBe(24);
  });

  it('null puts a severity back to its default; frameworks and sla can change together', async () => {
    const res = await putSettings({ frameworks: [{ id: 'soc2', enabled: true }], sla: { HIGH: null, INFO: null } });
    expect(res.statusCode).toBe(200);
    expect(res.json().sla).toEqual(DEFAULTS);
    for (const f of await allOpen()) expect(f.due_at).toBe(plusHours(f.created_at, DEFAULTS[f.severity]!));
  });
});

describe('due_at follows the finding', () => {
  it("is recomputed from when the finding was opened when its rule's severity changes", async () => {
    expect((await call(t.app, key, { method: 'POST', url: `${api(tenant.id)}/rules`, payload: customRule('LOW') })).statusCode).toBe(201);
    const bucket = { ...fixtureNode(builtinRules().find((r) => r.resource_type === 'aws.s3.bucket')!.id, 'compliant', 'sla-bucket'), name: 'sla-bucket' };
    await putNodes(t, key, tenant.id, [bucket]);
    await audit(t, key, tenant.id);
    const id = (await allOpen()).find((f) => f.id.startsWith('custom-sla-bucket:'))!.id;
    const created = await finding(id);
    expect(created).toMatchObject({ severity: 'LOW', due_at: plusHours(created.created_at, 2160) });
    t.clock.advance(HOUR);
    const updated = await call(t.app, key, { method: 'PUT', url: `${api(tenant.id)}/rules/custom-sla-bucket`, payload: customRule('CRITICAL') });
    expect(updated.statusCode).toBe(200);
    await audit(t, key, tenant.id);
    expect(await finding(id)).toMatchObject({ severity: 'CRITICAL', due_at: plusHours(created.created_at, 24) });
  });

  it('is recomputed when a known-exploited CVE raises the finding to CRITICAL', async () => {
    const medium = (await allOpen()).find((f) => f.severity === 'MEDIUM')!;
    const db = t.deps.database.db;
    await sql`UPDATE finding_rows SET cve_ids = ARRAY['CVE-2099-4242'] WHERE workspace_id = ${tenant.defaultWorkspaceId} AND id = ${medium.id}`.execute(db);
    await sql`
      INSERT INTO vulndb_kev (cve_id, vendor_project, product, vulnerability_name, date_added, short_description, required_action,
        known_ransomware_campaign_use, notes, content_hash, updated_at)
      VALUES ('CVE-2099-4242', 'v', 'p', 'n', '2099-01-01', 'd', 'a', 'Unknown', '', 'h', ${t.clock.now()})`.execute(db);
    await db.transaction().execute((trx) => reconcileKevSeverities(trx, t.clock));
    expect(await finding(medium.id)).toMatchObject({ severity: 'CRITICAL', due_at: plusHours(medium.created_at, 24) });
  });

  it('is cleared when the finding is resolved, and counts from the reopening when an audit finds it again', async () => {
    const high = (await allOpen()).find((f) => f.severity === 'HIGH')!;
    const resolved = await call(t.app, key, { method: 'POST', url: `${api(tenant.id)}/findings/${encodeURIComponent(high.id)}/resolve`, payload: {} });
    expect(resolved.statusCode).toBe(200);
    expect(resolved.json()).toMatchObject({ status: 'resolved', due_at: null });
    t.clock.advance(HOUR);
    const reopenedAt = t.clock.now().toISOString();
    await audit(t, key, tenant.id);
    expect(await finding(high.id)).toMatchObject({ status: 'open', due_at: plusHours(reopenedAt, 48) });
  });
});

describe('overdue and due soon', () => {
  let open: Finding[];
  let overdue: string[];
  let dueSoon: string[];
  beforeAll(async () => {
    // 25 hours after the first audit: its CRITICAL findings are overdue, its HIGH ones due within 24 hours.
    t.clock.set(new Date(t0 + 25 * HOUR));
    const now = t.clock.now().getTime();
    open = await allOpen();
    overdue = open
      .filter((f) => f.due_at && new Date(f.due_at).getTime() <= now)
      .map((f) => f.id)
      .sort();
    dueSoon = open
      .filter((f) => f.due_at && new Date(f.due_at).getTime() > now && new Date(f.due_at).getTime() <= now + 24 * HOUR)
      .map((f) => f.id)
      .sort();
  });

  it('GET /findings?sla=overdue lists the open findings past their due time, ?sla=due_soon those due within 24 hours', async () => {
    expect(overdue.length).toBeGreaterThan(0);
    expect(dueSoon.length).toBeGreaterThan(0);
    expect(open.filter((f) => overdue.includes(f.id)).every((f) => f.severity === 'CRITICAL')).toBe(true);
    const late = (await call(t.app, key, { url: `${api(tenant.id)}/findings?sla=overdue&per_page=500`, expect: 200 })).json();
    expect(late.items.map((f: Finding) => f.id).sort()).toEqual(overdue);
    expect(late.total).toBe(overdue.length);
    const soon = (await call(t.app, key, { url: `${api(tenant.id)}/findings?sla=due_soon&per_page=500`, expect: 200 })).json();
    expect(soon.items.map((f: Finding) => f.id).sort()).toEqual(dueSoon);
    // With the other filters.
    const highSoon = (await call(t.app, key, { url: `${api(tenant.id)}/findings?sla=due_soon&severity=HIGH&per_page=500`, expect: 200 })).json();
    expect(highSoon.items.map((f: Finding) => f.id).sort()).toEqual(
      open
        .filter((f) => dueSoon.includes(f.id) && f.severity === 'HIGH')
        .map((f) => f.id)
        .sort(),
    );
    // The other tenant's findings stay its own.
    const theirs = (await call(t.app, otherKey, { url: `${api(other.id)}/findings?sla=overdue&per_page=500`, expect: 200 })).json();
    expect(theirs.items.every((f: Finding) => !f.id.startsWith('custom-sla-bucket'))).toBe(true);
  });

  it('another sla value is 400', async () => {
    const res = await get(key, `${api(tenant.id)}/findings?sla=late`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('/sla must be one of overdue, due_soon');
  });

  it('GET /controls/status counts the overdue and due-soon active findings', async () => {
    const status = (await call(t.app, key, { url: `${api(tenant.id)}/controls/status`, expect: 200 })).json();
    expect(status.sla).toEqual({ overdue: overdue.length, due_soon: dueSoon.length });
    const soc2 = (await call(t.app, key, { url: `${api(tenant.id)}/controls/status?framework=soc2`, expect: 200 })).json();
    const soc2Overdue = (await call(t.app, key, { url: `${api(tenant.id)}/findings?sla=overdue&framework=soc2&per_page=500`, expect: 200 })).json();
    expect(soc2.sla.overdue).toBe(soc2Overdue.total);
  });

  it('finding.sla_breached is emitted once per overdue finding by the scheduled sweeper, by the app clock', async () => {
    const scheduler = new Scheduler({
      db: t.deps.database.db,
      clock: t.clock,
      log: t.deps.log,
      schedules: [{ name: 'finding-sla-sweeper', kind: 'compliance.record-sla-breaches', intervalMs: 60_000 }],
    });
    await scheduler.register();
    await scheduler.tick();
    await t.drain();
    const breached = await events(t, tenant.id, 'finding.sla_breached');
    expect(breached.map((e) => (e.data as { finding: { id: string } }).finding.id).sort()).toEqual(overdue);
    const first = open.find((f) => f.id === overdue[0])!;
    expect(breached.find((e) => (e.data as { finding: { id: string } }).finding.id === first.id)!.data).toMatchObject({
      finding: { id: first.id, severity: 'CRITICAL', rule_id: expect.any(String), title: expect.any(String), resource_id: expect.any(String) },
      due_at: first.due_at,
    });
    // Once: a second sweep at the same time, and one later, report nothing new for them.
    expect(await sweepSlaBreaches(t.deps)).toBe(0);
    t.clock.advance(60_000);
    await sweepSlaBreaches(t.deps);
    expect((await events(t, tenant.id, 'finding.sla_breached')).length).toBe(overdue.length);
    // The other tenant's CRITICAL findings breached too, as its own events.
    const theirs = await events(t, other.id, 'finding.sla_breached');
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((e) => e.workspace_id === other.defaultWorkspaceId)).toBe(true);
  });

  it('reports the findings that pass their due time later; a resolved finding is not reported', async () => {
    const resolve = dueSoon[0]!;
    await call(t.app, key, { method: 'POST', url: `${api(tenant.id)}/findings/${encodeURIComponent(resolve)}/resolve`, payload: {}, expect: 200 });
    t.clock.set(new Date(t0 + 49 * HOUR));
    expect(await sweepSlaBreaches(t.deps)).toBeGreaterThan(0);
    const ids = (await events(t, tenant.id, 'finding.sla_breached')).map((e) => (e.data as { finding: { id: string } }).finding.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).not.toContain(resolve);
    for (const id of dueSoon.filter((id) => id !== resolve)) expect(ids).toContain(id);
  });

  it('integrations can subscribe to finding.sla_breached', async () => {
    const webhook = (events: string[]) =>
      call(t.app, key, {
        method: 'POST',
        url: `${api(tenant.id)}/integrations`,
        payload: { type: 'webhook', name: 'sla', config: { url: 'https://hooks.example.com/sla', events, secret: 'a-secret-of-some-length' } },
      });
    const res = await webhook(['finding.sla_breached']);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().config.events).toEqual(['finding.sla_breached']);
    expect((await webhook(['finding.sla_breach'])).statusCode).toBe(400);
  });
});
