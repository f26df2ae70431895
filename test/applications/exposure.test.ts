import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { awsNode, putEdges, putNodes } from '../harness/graph.js';
import { nodeIdOf } from '../harness/compliance.js';
import { projectPath } from '../../src/platform/paths.js';
import { importLocation } from '../../src/modules/vulndb/import/importer.js';
import { client, type Client } from './helpers.js';
import { cycloneDxErrors, ntiaGapsCycloneDx, ntiaGapsSpdx, spdxErrors } from '../agents/sbom-checks.js';

/*
 * Service SBOM and CVE exposure over real data: the Debian 12 build machine's 710 dpkg packages
 * (test/fixtures/agents), the osv.dev Debian advisories for them, the CISA KEV catalogue and the EPSS
 * scores of its CVEs (test/fixtures/vulndb; sources and licences in the SOURCES.md files there). The
 * host reports through the agent endpoint as the real agent does; a second host carries its packages
 * on the node (a discovery plugin's import).
 */
const vulnFixture = (name: string) => projectPath('test', 'fixtures', 'vulndb', name);
const agentFixture = (name: string) => projectPath('test', 'fixtures', 'agents', name);
const KEV_JSON = vulnFixture('known_exploited_vulnerabilities.json');
const EPSS_KEV = vulnFixture('epss-kev-subset.csv');
const OSV_DEBIAN = agentFixture('osv-debian12-host-subset.json.gz');

const kevCatalog = new Map(
  (JSON.parse(readFileSync(KEV_JSON, 'utf8')) as { vulnerabilities: Array<{ cveID: string; dateAdded: string; dueDate: string }> }).vulnerabilities.map((v) => [v.cveID, v]),
);
const epss = new Map(
  readFileSync(EPSS_KEV, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(','))
    .map(([cve, score]) => [cve!, Number(score)]),
);

/** The build machine's packages; nghttp2 at bookworm's release version, before the Rapid Reset fix (CVE-2023-44487, in KEV). */
function inventory() {
  return readFileSync(agentFixture('dpkg-packages-with-source.tsv'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name, version, arch, sourceName, sourceVersion] = line.split('\t') as [string, string, string, string, string];
      const old = name === 'libnghttp2-14' ? '1.52.0-1' : null;
      return { name, version: old ?? version, source: 'dpkg', installed_at: null, cves: [], arch, source_name: sourceName, source_version: old ?? sourceVersion };
    });
}

const DEBIAN_OS = {
  family: 'linux',
  id: 'debian',
  version_id: '12',
  name: 'Debian GNU/Linux',
  version: '12 (bookworm)',
  pretty_name: 'Debian GNU/Linux 12 (bookworm)',
  kernel: '6.1.0-26-amd64',
  arch: 'x86_64',
};
const MACHINE_ID = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
const AGENT_HOST = `host:local:host.os.instance:${MACHINE_ID}`;

function report() {
  return {
    schema_version: '1.0',
    agent_id: 'agent-shop-1',
    agent_version: '0.1.0',
    scan_id: `scan-${randomUUID()}`,
    scanned_at: '2026-11-23T12:00:00.000Z',
    host: { machine_id: MACHINE_ID, hostname: 'shop-web-1', fqdn: null, region: null, boot_time: null, cloud: { provider: 'aws', instance_id: 'i-shop-web' } },
    os: DEBIAN_OS,
    collectors: [],
    packages: inventory(),
  };
}

// The cloud instance the agent runs on (tagged app=shop) and an Internet node that exposes it.
const web = { ...awsNode('aws.ec2.instance', 'i-shop-web'), tags: { app: 'shop' } };
const gateway = awsNode('aws.internet.gateway', 'igw-shop');
// A legacy host whose packages a discovery plugin put on the node: libwebp before the fix of CVE-2023-4863 (in KEV).
const legacy = {
  ...awsNode('aws.ec2.instance', 'i-shop-legacy', {
    properties: {
      configuration: {},
      os: { id: 'debian', version_id: '12', name: 'Debian GNU/Linux' },
      packages: [
        { name: 'libwebp7', version: '1.2.4-0.2', source: 'dpkg', arch: 'amd64', source_name: 'libwebp', source_version: '1.2.4-0.2' },
        { name: 'requests', version: '2.31.0', source: 'pip' },
      ],
    },
  }),
  tags: { app: 'shop' },
};
const plain = { ...awsNode('aws.s3.bucket', 'reports-bucket'), tags: { app: 'reports' } };

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let api: Client;
let shopService: string;
let emptyService: string;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  const token = tenant.users['security-analyst'].token;
  api = client(t, tenant.id, token);
  const log = pino({ level: 'silent' });
  for (const file of [OSV_DEBIAN, KEV_JSON, EPSS_KEV]) {
    const result = await importLocation({ db: t.deps.database.db, clock: t.clock, log }, file, { trigger: 'cli' });
    expect(result.status, `${file}: ${result.error}`).toBe('succeeded');
  }
  await putNodes(t, token, tenant.id, [web, gateway, legacy, plain]);
  await putEdges(t, token, tenant.id, [{ source: nodeIdOf(gateway), target: nodeIdOf(web), type: 'exposes' }]);
  const key = await createApiKey(t, tenant, { permissions: ['agents:write'] });
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agents/agent-shop-1/report',
    headers: { ...bearer(key.key), 'content-type': 'application/json', 'content-encoding': 'gzip' },
    payload: gzipSync(JSON.stringify(report())),
  });
  expect(res.statusCode, res.body).toBe(200);
  await t.drain();
  const apps = (await api.get('/applications?per_page=500')).items as Array<{ id: string; name: string }>;
  const byName = Object.fromEntries(apps.map((a) => [a.name, a.id]));
  shopService = (await api.post('/services', { name: 'Shop', criticality: 'critical', application_ids: [byName.shop] }, 201)).id;
  emptyService = (await api.post('/services', { name: 'Reports', criticality: 'low', application_ids: [byName.reports] }, 201)).id;
}, 240_000);
afterAll(() => t.close());

/** Packages whose publisher the inventory does not carry (language ecosystems): NTIA allows "unknown". */
const unknownSupplier = (c: { purl?: string; externalRefs?: Array<{ referenceLocator: string }> }) =>
  [c.purl, ...(c.externalRefs ?? []).map((r) => r.referenceLocator)].some((p) => p?.startsWith('pkg:pypi/'));

describe('GET /services/{serviceID}/sbom', () => {
  it("is a valid CycloneDX 1.5 BOM of the software on the service's hosts, each host named, with their vulnerabilities", async () => {
    const res = await call(t.app, tenant.users['read-only'].token, { url: `/api/v1/tenants/${tenant.id}/services/${shopService}/sbom`, expect: 200 });
    expect(res.headers['content-type']).toMatch(/^application\/vnd\.cyclonedx\+json/);
    const bom = res.json();
    expect(await cycloneDxErrors(bom)).toBeNull();
    expect(ntiaGapsCycloneDx(bom, unknownSupplier)).toEqual([]);
    expect(bom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.5' });
    expect(bom.serialNumber).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(bom.metadata.component).toMatchObject({ type: 'application', name: 'Shop', 'bom-ref': `service:${shopService}` });
    const props = Object.fromEntries(bom.metadata.properties.map((p: { name: string; value: string }) => [p.name, p.value]));
    expect(props['controlgraph:hosts']).toBe('2');

    type Component = { type: string; name: string; version?: string; purl?: string; description?: string; 'bom-ref': string };
    const components = bom.components as Component[];
    // Hosts are devices named after the host, told apart by name and node id (both run Debian 12).
    const hosts = components.filter((c) => c.type === 'device');
    expect(hosts.map((h) => [h['bom-ref'], h.name]).sort()).toEqual(
      [
        [AGENT_HOST, 'shop-web-1'],
        [nodeIdOf(legacy), legacy.name],
      ].sort(),
    );
    const systems = components.filter((c) => c.type === 'operating-system');
    expect(systems.map((o) => [o['bom-ref'], o.name, o.version]).sort()).toEqual(
      [
        [`${AGENT_HOST}#os`, 'debian', '12'],
        [`${nodeIdOf(legacy)}#os`, 'debian', '12'],
      ].sort(),
    );
    expect(systems.find((o) => o['bom-ref'] === `${AGENT_HOST}#os`)!.description).toBe('Debian GNU/Linux 12 (bookworm) on shop-web-1');
    const libraries = components.filter((c) => c.type === 'library');
    expect(props['controlgraph:packages']).toBe(String(libraries.length));
    const purls = new Set(libraries.map((l) => l.purl));
    expect(purls.has('pkg:deb/debian/libnghttp2-14@1.52.0-1?arch=amd64&distro=debian-12&upstream=nghttp2')).toBe(true);
    expect(purls.has('pkg:deb/debian/libwebp7@1.2.4-0.2?arch=amd64&distro=debian-12&upstream=libwebp')).toBe(true);
    expect(purls.has('pkg:pypi/requests@2.31.0')).toBe(true);

    // service -> hosts -> operating system and packages
    const deps = new Map((bom.dependencies as Array<{ ref: string; dependsOn?: string[] }>).map((d) => [d.ref, d.dependsOn ?? []]));
    expect([...deps.get(`service:${shopService}`)!].sort()).toEqual(hosts.map((h) => h['bom-ref']).sort());
    expect(deps.get(AGENT_HOST)).toHaveLength(inventory().length + 1);
    expect(deps.get(nodeIdOf(legacy))).toHaveLength(3);

    // The vulnerabilities of both hosts: the agent host's (every CVE of its CVE findings) and the node-carried libwebp's.
    const vulnerabilities = bom.vulnerabilities as Array<{ id: string; source: { name: string }; affects: Array<{ ref: string }> }>;
    const ids = new Set(vulnerabilities.map((v) => v.id));
    const findings = await call(t.app, tenant.admin.token, {
      url: `/api/v1/tenants/${tenant.id}/findings?status=open&per_page=500&resource_id=${encodeURIComponent(AGENT_HOST)}`,
      expect: 200,
    });
    const hostCves = (findings.json().items as Array<{ rule_id: string; cve_ids: string[] }>).filter((f) => f.rule_id.startsWith('host-vuln-')).flatMap((f) => f.cve_ids);
    expect(hostCves.length).toBeGreaterThan(50);
    for (const cve of hostCves) expect(ids.has(cve), cve).toBe(true);
    expect(props['controlgraph:vulnerabilities']).toBe(String(vulnerabilities.length));
    const webp = vulnerabilities.find((v) => v.id === 'CVE-2023-4863')!;
    expect(webp.source.name).toBe('Debian Security Tracker');
    expect(webp.affects.map((a) => a.ref)).toEqual(['pkg:deb/debian/libwebp7@1.2.4-0.2?arch=amd64&distro=debian-12&upstream=libwebp']);
    const rapidReset = vulnerabilities.find((v) => v.id === 'CVE-2023-44487')!;
    expect(rapidReset.affects.map((a) => a.ref)).toEqual(['pkg:deb/debian/libnghttp2-14@1.52.0-1?arch=amd64&distro=debian-12&upstream=nghttp2']);
  });

  it('is SPDX 2.3 with ?format=spdx: valid against the official schema, hosts named, the NTIA elements present', async () => {
    const res = await call(t.app, tenant.users['read-only'].token, { url: `/api/v1/tenants/${tenant.id}/services/${shopService}/sbom?format=spdx`, expect: 200 });
    expect(res.headers['content-type']).toMatch(/^application\/spdx\+json/);
    const doc = res.json();
    expect(spdxErrors(doc)).toBeNull();
    expect(ntiaGapsSpdx(doc, unknownSupplier)).toEqual([]);
    expect(doc.documentDescribes).toEqual(['SPDXRef-Service']);
    const devices = doc.packages.filter((p: { primaryPackagePurpose: string }) => p.primaryPackagePurpose === 'DEVICE');
    expect(devices.map((d: { name: string }) => d.name).sort()).toEqual(['shop-web-1', legacy.name].sort());
    const dependsOn = doc.relationships.filter((r: { relationshipType: string }) => r.relationshipType === 'DEPENDS_ON');
    expect(dependsOn.map((r: { relatedSpdxElement: string }) => r.relatedSpdxElement).sort()).toEqual(devices.map((d: { SPDXID: string }) => d.SPDXID).sort());
  });

  it('is an empty, valid BOM for a service without agent data; 400 naming the formats for another format; 404 for an unknown or foreign service', async () => {
    const res = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/services/${emptyService}/sbom`, expect: 200 });
    const bom = res.json();
    expect(await cycloneDxErrors(bom)).toBeNull();
    expect(bom.components ?? []).toEqual([]);
    expect(bom.vulnerabilities).toBeUndefined();
    expect(bom.metadata.properties).toEqual(expect.arrayContaining([{ name: 'controlgraph:hosts', value: '0' }]));
    for (const format of ['xml', 'json', 'spdx-tag']) {
      const bad = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/services/${shopService}/sbom?format=${format}`, expect: 400 });
      expect(bad.json().error.message).toBe(`unknown SBOM format "${format}": the formats are cyclonedx (CycloneDX 1.5 JSON, the default) and spdx (SPDX 2.3 JSON)`);
    }
    await api.get(`/services/${randomUUID()}/sbom`, 404);
    await client(t, other.id, other.admin.token).get(`/services/${shopService}/sbom`, 404);
    await api.get('/services/not-a-uuid/sbom', 400);
  });
});

type Item = {
  cve_id: string;
  risk_score: number;
  risk_factors: { severity: number; kev: number; epss: number; exposure: number; criticality: number };
  severity: string;
  is_kev: boolean;
  kev_date_added: string | null;
  kev_due_date: string | null;
  epss_score: number | null;
  cvss_v3_score: number | null;
  exposed: boolean;
  sources: string[];
  resources: Array<{ id: string }>;
  packages: Array<{ name: string; version: string; purl: string; host_id: string; advisories: string[]; fixed_versions: string[] }>;
  finding_ids: string[];
};

describe('GET /services/{serviceID}/cve-exposure', () => {
  let all: Item[];

  it('lists the CVEs of the hosts with KEV and EPSS, sorted by risk', async () => {
    const res = await api.get(`/services/${shopService}/cve-exposure?per_page=500`);
    all = res.items;
    expect(res).toMatchObject({ service: { id: shopService, name: 'Shop', criticality: 'critical' }, hosts: 2, packages: inventory().length + 2 });
    expect(res.total).toBe(all.length);
    expect(all.length).toBeGreaterThan(10);
    // Sorted by risk score, then EPSS, then CVSS, then id.
    for (let i = 1; i < all.length; i++) {
      const [a, b] = [all[i - 1]!, all[i]!];
      const key = (x: Item) => [x.risk_score, x.epss_score ?? -1, x.cvss_v3_score ?? -1];
      const [ka, kb] = [key(a), key(b)];
      const order = ka[0]! - kb[0]! || ka[1]! - kb[1]! || ka[2]! - kb[2]! || (a.cve_id < b.cve_id ? 1 : -1);
      expect(order, `${a.cve_id} before ${b.cve_id}`).toBeGreaterThan(0);
    }
    // The two known-exploited CVEs come first, each with the catalogue's dates and its EPSS score.
    expect(all.slice(0, 2).map((i) => i.cve_id)).toEqual(['CVE-2023-44487', 'CVE-2023-4863']);
    for (const item of all) {
      const kev = kevCatalog.get(item.cve_id);
      expect(item.is_kev, item.cve_id).toBe(kev !== undefined);
      if (kev) expect([item.kev_date_added, item.kev_due_date]).toEqual([kev.dateAdded, kev.dueDate]);
      if (epss.has(item.cve_id)) expect(item.epss_score).toBeCloseTo(epss.get(item.cve_id)!, 6);
      const f = item.risk_factors;
      expect(item.risk_score).toBe(Math.min(100, f.severity + f.kev + f.epss + f.exposure + f.criticality));
      expect(f.criticality).toBe(10);
    }
    expect(res.summary).toMatchObject({ cves: all.length, kev: 2, exposed: all.filter((i) => i.exposed).length });
  });

  it('names where each CVE is: the host, the package and the advisory, and the findings of the agent', async () => {
    const rapidReset = all.find((i) => i.cve_id === 'CVE-2023-44487')!;
    // KEV makes it critical; the agent's host is the instance the Internet gateway exposes.
    expect(rapidReset).toMatchObject({
      severity: 'CRITICAL',
      is_kev: true,
      exposed: true,
      risk_factors: { severity: 60, kev: 15, epss: 10, exposure: 10, criticality: 10 },
      risk_score: 100,
    });
    expect(rapidReset.resources.map((r) => r.id)).toEqual([AGENT_HOST]);
    expect(rapidReset.packages).toEqual([
      expect.objectContaining({
        name: 'libnghttp2-14',
        version: '1.52.0-1',
        host_id: AGENT_HOST,
        advisories: expect.arrayContaining(['CVE-2023-44487']),
        fixed_versions: expect.arrayContaining(['1.52.0-1+deb12u1']),
      }),
    ]);
    // The agent's vulnerable-package finding on its host node names the same CVE: it counts too.
    expect(rapidReset.sources).toEqual(['finding', 'package']);
    const findings = (await api.get(`/findings?resource_id=${encodeURIComponent(AGENT_HOST)}&per_page=500`)).items as Array<{ id: string; cve_ids: string[] }>;
    const naming = findings.filter((f) => f.cve_ids.includes('CVE-2023-44487')).map((f) => f.id);
    expect(naming.length).toBeGreaterThan(0);
    expect(rapidReset.finding_ids).toEqual(naming.sort());
    // Every CVE of an open finding on the host is in the exposure.
    const listed = new Set(all.map((i) => i.cve_id));
    for (const f of findings) for (const cve of f.cve_ids) expect(listed.has(cve), cve).toBe(true);

    const webp = all.find((i) => i.cve_id === 'CVE-2023-4863')!;
    expect(webp).toMatchObject({ is_kev: true, exposed: false, sources: ['package'], finding_ids: [], risk_score: 95 });
    expect(webp.resources.map((r) => r.id)).toEqual([nodeIdOf(legacy)]);
    expect(webp.packages[0]).toMatchObject({ name: 'libwebp7', version: '1.2.4-0.2', host_id: nodeIdOf(legacy), fixed_versions: ['1.2.4-0.2+deb12u1'] });
  });

  it('filters by kev and min_score, pages, and answers 400/404 for bad requests', async () => {
    const kev = await api.get(`/services/${shopService}/cve-exposure?kev=true`);
    expect(kev.items.map((i: Item) => i.cve_id)).toEqual(['CVE-2023-44487', 'CVE-2023-4863']);
    expect(kev.summary.cves).toBe(all.length);
    const top = await api.get(`/services/${shopService}/cve-exposure?min_score=96`);
    expect(top.items.map((i: Item) => i.cve_id)).toEqual(['CVE-2023-44487']);
    const page = await api.get(`/services/${shopService}/cve-exposure?per_page=5&page=2`);
    expect(page).toMatchObject({ page: 2, per_page: 5, total: all.length, total_pages: Math.ceil(all.length / 5) });
    expect(page.items.map((i: Item) => i.cve_id)).toEqual(all.slice(5, 10).map((i) => i.cve_id));
    await api.get(`/services/${shopService}/cve-exposure?min_score=101`, 400);
    await api.get(`/services/${shopService}/cve-exposure?per_page=501`, 400);
    await api.get(`/services/${randomUUID()}/cve-exposure`, 404);
    await client(t, other.id, other.admin.token).get(`/services/${shopService}/cve-exposure`, 404);
  });

  it('is empty for a service whose resources have no software data', async () => {
    const res = await api.get(`/services/${emptyService}/cve-exposure`);
    expect(res).toMatchObject({ hosts: 0, packages: 0, items: [], total: 0, summary: { cves: 0, kev: 0, high_epss: 0, exposed: 0 } });
  });
});
