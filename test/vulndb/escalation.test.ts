import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, type TenantFixture } from '../harness/identity.js';
import { createKevLookup } from '../../src/modules/vulndb/escalation.js';
import { createCveIntel } from '../../src/modules/vulndb/cve-intel.js';
import { storeFindingTexts } from '../../src/modules/compliance/findings/finding-texts.js';
import { EPSS_KEV, importer, KEV_JSON, readJson, scratchDir, vulndbModules } from './helpers.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let run: ReturnType<typeof importer>;
const tmp = scratchDir();
let withoutLog4j: string;

const LOG4J = 'CVE-2021-44228';
const PAN_OS = 'CVE-2024-3400';

interface FindingSeed {
  id: string;
  tenant: TenantFixture;
  base: string;
  severity?: string;
  status?: 'open' | 'resolved';
  cves: string[];
}

async function insertFinding(f: FindingSeed): Promise<void> {
  const now = t.clock.now();
  const scope = { tenantId: f.tenant.id, workspaceId: f.tenant.defaultWorkspaceId };
  const text = { title: 'Vulnerable package', description: 'A package with known CVEs', remediation: 'Upgrade', framework_mappings: [] };
  const [textId] = await storeFindingTexts(t.deps.database.db, scope, [text]);
  await sql`
    INSERT INTO finding_rows (tenant_id, workspace_id, id, rule_id, framework, control_id, base_severity, severity, status, text_id,
      resource_id, resource_type, resource_name, region, cve_ids, group_id, first_seen, last_seen, created_at, updated_at)
    VALUES (${f.tenant.id}, ${f.tenant.defaultWorkspaceId}, ${f.id}, ${f.id.split(':')[0]}, 'nist-800-53', 'RA-5', ${f.base}, ${f.severity ?? f.base},
      ${f.status ?? 'open'}, ${textId}, ${f.id.split(':').slice(1).join(':')}, 'host', 'web-1', 'eu-west-1',
      ${f.cves}::text[], 'g1', ${now}, ${now}, ${now}, ${now})`.execute(t.deps.database.db);
}

async function severities(): Promise<Record<string, string>> {
  const rows = await sql<{ id: string; severity: string }>`SELECT id, severity FROM findings`.execute(t.deps.database.db);
  return Object.fromEntries(rows.rows.map((r) => [r.id, r.severity]));
}

async function events() {
  const rows = await t.deps.database.db
    .selectFrom('outbox_events')
    .select(['tenant_id', 'workspace_id', 'type', 'data'])
    .where('type', '=', 'finding.severity_changed')
    .orderBy('seq')
    .execute();
  return rows;
}

beforeAll(async () => {
  t = await createTestApp({ extraModules: vulndbModules() });
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  run = importer(t.deps.database.db, t.clock);
  const catalog = readJson(KEV_JSON);
  catalog.vulnerabilities = catalog.vulnerabilities.filter((v: { cveID: string }) => v.cveID !== LOG4J);
  catalog.count = catalog.vulnerabilities.length;
  withoutLog4j = tmp.write('kev-without-log4j.json', JSON.stringify(catalog));
  await insertFinding({ id: 'pkg-vuln:host:web-1:log4j', tenant, base: 'HIGH', cves: [LOG4J, 'CVE-2099-0001'] });
  await insertFinding({ id: 'pkg-vuln:host:web-1:other', tenant, base: 'MEDIUM', cves: ['CVE-2099-0001'] });
  await insertFinding({ id: 'pkg-vuln:host:web-1:resolved', tenant, base: 'LOW', status: 'resolved', cves: [LOG4J] });
  await insertFinding({ id: 'pkg-vuln:host:web-1:critical', tenant, base: 'CRITICAL', cves: [LOG4J] });
  await insertFinding({ id: 'pkg-vuln:host:web-1:no-cve', tenant, base: 'MEDIUM', severity: 'HIGH', cves: [] });
  await insertFinding({ id: 'pkg-vuln:host:db-1:log4j', tenant: other, base: 'LOW', cves: [LOG4J] });
  await insertFinding({ id: 'pkg-vuln:host:fw-1:pan-os', tenant: other, base: 'MEDIUM', cves: [PAN_OS] });
});
afterAll(async () => {
  await t.close();
  tmp.remove();
});

describe('KEV escalation of findings', () => {
  it('an import escalates every open finding referencing a catalog CVE to CRITICAL, with an event each', async () => {
    const result = await run(withoutLog4j);
    expect(result).toMatchObject({ status: 'succeeded', records: 1403, findings_escalated: 1, findings_restored: 0 });
    expect(await severities()).toMatchObject({ 'pkg-vuln:host:fw-1:pan-os': 'CRITICAL', 'pkg-vuln:host:db-1:log4j': 'LOW' });
    const [panOs] = await events();
    expect(panOs).toMatchObject({
      tenant_id: other.id,
      workspace_id: other.defaultWorkspaceId,
      type: 'finding.severity_changed',
      data: {
        finding_id: 'pkg-vuln:host:fw-1:pan-os',
        rule_id: 'pkg-vuln',
        resource_id: 'host:fw-1:pan-os',
        previous_severity: 'MEDIUM',
        severity: 'CRITICAL',
        reason: 'known_exploited',
        cve_ids: [PAN_OS],
      },
    });
  });

  it('when the catalog gains a CVE later, the next import escalates its findings (open ones only)', async () => {
    const result = await run(KEV_JSON);
    expect(result).toMatchObject({ status: 'succeeded', inserted: 1, findings_escalated: 2 });
    expect(await severities()).toEqual({
      'pkg-vuln:host:web-1:log4j': 'CRITICAL',
      'pkg-vuln:host:web-1:other': 'MEDIUM',
      'pkg-vuln:host:web-1:resolved': 'LOW',
      'pkg-vuln:host:web-1:critical': 'CRITICAL',
      'pkg-vuln:host:web-1:no-cve': 'HIGH',
      'pkg-vuln:host:db-1:log4j': 'CRITICAL',
      'pkg-vuln:host:fw-1:pan-os': 'CRITICAL',
    });
    const changed = (await events()).slice(1);
    expect(changed.map((e) => [e.tenant_id, e.data.finding_id, e.data.previous_severity, e.data.severity, e.data.cve_ids]).sort()).toEqual(
      [
        [tenant.id, 'pkg-vuln:host:web-1:log4j', 'HIGH', 'CRITICAL', [LOG4J]],
        [other.id, 'pkg-vuln:host:db-1:log4j', 'LOW', 'CRITICAL', [LOG4J]],
      ].sort(),
    );
    expect(changed.every((e) => e.data.reason === 'known_exploited')).toBe(true);
  });

  it('a re-import changes no finding and emits nothing', async () => {
    expect(await run(KEV_JSON)).toMatchObject({ status: 'succeeded', unchanged: 1404, findings_escalated: 0, findings_restored: 0 });
    expect(await events()).toHaveLength(3);
  });

  it('when a CVE leaves the catalog, its findings get their base severity back, with events', async () => {
    const result = await run(withoutLog4j);
    expect(result).toMatchObject({ status: 'succeeded', deleted: 1, findings_escalated: 0, findings_restored: 2 });
    expect(await severities()).toMatchObject({
      'pkg-vuln:host:web-1:log4j': 'HIGH',
      'pkg-vuln:host:db-1:log4j': 'LOW',
      'pkg-vuln:host:web-1:critical': 'CRITICAL',
      'pkg-vuln:host:fw-1:pan-os': 'CRITICAL',
      'pkg-vuln:host:web-1:no-cve': 'HIGH',
    });
    const restored = (await events()).slice(3);
    expect(restored.map((e) => [e.data.finding_id, e.data.previous_severity, e.data.severity, e.data.reason]).sort()).toEqual(
      [
        ['pkg-vuln:host:web-1:log4j', 'CRITICAL', 'HIGH', 'no_longer_known_exploited'],
        ['pkg-vuln:host:db-1:log4j', 'CRITICAL', 'LOW', 'no_longer_known_exploited'],
      ].sort(),
    );
  });

  it('a broken catalog changes no finding', async () => {
    const before = await severities();
    const result = await run(tmp.write('kev-broken.json', '{"catalogVersion": "x", "count": 2, "vulnerabilities": [{"cveID": "CVE-2021-44228"'));
    expect(result.status).toBe('failed');
    expect(await severities()).toEqual(before);
    expect(await events()).toHaveLength(5);
  });

  it('the KEV lookup answers which CVEs are known-exploited', async () => {
    const lookup = createKevLookup(t.deps.database.db);
    expect(await lookup.isKnownExploited([PAN_OS, LOG4J, 'cve-2024-3400', 'CVE-2099-0001'])).toEqual(new Set([PAN_OS]));
    expect(await lookup.isKnownExploited([])).toEqual(new Set());
  });

  it('the CVE intelligence for risk scoring gives KEV membership and EPSS per CVE in one call', async () => {
    expect((await run(EPSS_KEV)).status).toBe('succeeded');
    const intel = await createCveIntel(t.deps.database.db)([PAN_OS, LOG4J, 'CVE-2099-0001']);
    expect([...intel.keys()].sort()).toEqual([LOG4J, PAN_OS]);
    expect(intel.get(PAN_OS)).toEqual({ kev: true, epss: expect.any(Number) });
    // Log4Shell left the catalog in this test; its EPSS score is still known.
    expect(intel.get(LOG4J)).toMatchObject({ kev: false });
    expect(intel.get(LOG4J)!.epss).toBeGreaterThan(0.9);
  });
});
