import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { putEdges, putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { builtinRule } from '../../src/modules/compliance/rule-catalog.js';
import { storeFindingTexts } from '../../src/modules/compliance/findings/finding-texts.js';
import { EPSS_KEV, importer, KEV_JSON, vulndbModules } from '../vulndb/helpers.js';

// The stored risk score (finding_rows.risk_score) moves with each of its inputs, and so does the
// order of GET /findings/scored, which pages by it.
let t: TestApp;
let tenant: TenantFixture;
let token: string;
const sg = fixtureNode('aws-ec2-sg-no-ssh-from-internet', 'violating', 'sg-open');
const instance = fixtureNode('aws-ec2-instance-imdsv2-required', 'violating', 'i-target');
const peer = fixtureNode('aws-ec2-instance-imdsv2-required', 'violating', 'i-peer');
const instanceFinding = `${builtinRule('aws-ec2-instance-imdsv2-required')!.id}:${nodeIdOf(instance)}`;
const peerFinding = `${builtinRule('aws-ec2-instance-imdsv2-required')!.id}:${nodeIdOf(peer)}`;
const LOG4J = 'CVE-2021-44228';
const cveFinding = `pkg-vuln:${nodeIdOf(instance)}`;

beforeAll(async () => {
  t = await createTestApp({ extraModules: vulndbModules() });
  tenant = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
  await putNodes(t, token, tenant.id, [sg, instance, peer]);
  await audit(t, token, tenant.id);
});
afterAll(() => t.close());

const stored = async (id: string) =>
  (await sql<{ risk_score: number }>`SELECT risk_score FROM finding_rows WHERE workspace_id = ${tenant.defaultWorkspaceId} AND id = ${id}`.execute(t.deps.database.db)).rows[0]!
    .risk_score;
const scored = async () =>
  (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/scored?per_page=500`, expect: 200 })).json().items as Array<{
    id: string;
    risk_score: number;
    risk_factors: Record<string, number>;
  }>;
const position = (items: Array<{ id: string }>, id: string) => items.findIndex((i) => i.id === id);

describe('the stored risk score', () => {
  it('exposure: an edge from a resource open to the world raises the score and the order at once', async () => {
    const before = await stored(instanceFinding);
    expect(before).toBe(await stored(peerFinding));
    await putEdges(t, token, tenant.id, [{ source: nodeIdOf(sg), target: nodeIdOf(instance), type: 'protects' }]);
    expect(await stored(instanceFinding)).toBe(before + 10);
    const items = await scored();
    expect(position(items, instanceFinding)).toBeLessThan(position(items, peerFinding));
    expect(items.find((i) => i.id === instanceFinding)!.risk_factors.exposure).toBe(10);
  });

  it("criticality: a business service holding the resource's application raises it; deleting the service lowers it", async () => {
    const base = `/api/v1/tenants/${tenant.id}`;
    const admin = tenant.admin.token;
    const before = await stored(peerFinding);
    const app = (
      await call(t.app, admin, { method: 'POST', url: `${base}/applications`, payload: { name: 'peer-app', filter: `native_id = "${peer.native_id}"` }, expect: 201 })
    ).json();
    const service = (
      await call(t.app, admin, { method: 'POST', url: `${base}/services`, payload: { name: 'billing', criticality: 'critical', application_ids: [app.id] }, expect: 201 })
    ).json();
    expect(await stored(peerFinding)).toBe(before + 10);
    const items = await scored();
    expect(position(items, peerFinding)).toBeLessThan(position(items, instanceFinding));
    await call(t.app, admin, { method: 'DELETE', url: `${base}/services/${service.id}`, expect: 204 });
    expect(await stored(peerFinding)).toBe(before);
  });

  it('severity, KEV and EPSS: an import moves the findings naming its CVEs', async () => {
    const scope = { tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId };
    const [textId] = await storeFindingTexts(t.deps.database.db, scope, [{ title: 'Vulnerable package', description: 'log4j', remediation: 'Upgrade', framework_mappings: [] }]);
    const now = t.clock.now();
    await sql`
      INSERT INTO finding_rows (tenant_id, workspace_id, id, rule_id, framework, control_id, base_severity, severity, status, text_id,
        resource_id, resource_type, resource_name, region, cve_ids, group_id, first_seen, last_seen, created_at, updated_at)
      VALUES (${tenant.id}, ${tenant.defaultWorkspaceId}, ${cveFinding}, 'pkg-vuln', 'nist-800-53', 'RA-5', 'LOW', 'LOW', 'open', ${textId},
        ${nodeIdOf(instance)}, 'host', 'web-1', 'eu-west-1', ${[LOG4J]}::text[], 'g1', ${now}, ${now}, ${now}, ${now})`.execute(t.deps.database.db);
    // The severity's share from the insert on (a trigger): LOW is 15.
    expect(await stored(cveFinding)).toBe(15);
    const run = importer(t.deps.database.db, t.clock);
    expect((await run(KEV_JSON)).status).toBe('succeeded');
    // Escalated to CRITICAL (60), known-exploited (15), on a resource exposed through the security group (10).
    expect(await stored(cveFinding)).toBe(85);
    let items = await scored();
    expect(items[0]!.id).toBe(cveFinding);
    expect(items[0]!.risk_factors).toMatchObject({ severity: 60, kev: 15, exposure: 10 });
    expect((await run(EPSS_KEV)).status).toBe('succeeded');
    items = await scored();
    const epss = items.find((i) => i.id === cveFinding)!.risk_factors.epss;
    expect(epss).toBeGreaterThan(0);
    expect(await stored(cveFinding)).toBe(85 + epss!);
    for (const i of items)
      expect(i.risk_score).toBe(
        Math.min(
          100,
          Object.values(i.risk_factors).reduce((a, b) => a + b, 0),
        ),
      );
  });

  it('an audit keeps them exact: every stored score equals its recomputed factors', async () => {
    await audit(t, token, tenant.id);
    for (const i of await scored())
      expect(i.risk_score, i.id).toBe(
        Math.min(
          100,
          Object.values(i.risk_factors).reduce((a, b) => a + b, 0),
        ),
      );
  });
});
