import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { buildReport, inventoryPackages, loadVulnerabilityData, nodePath, sendReport } from './helpers.js';
import { cycloneDxErrors, ntiaGapsCycloneDx, ntiaGapsSpdx, spdxErrors } from './sbom-checks.js';

/**
 * GET /tenants/{tenantID}/nodes/{id}/sbom of a host with a real inventory (the 710 dpkg packages of a
 * Debian 12 machine, nghttp2 held back before the Rapid Reset fix) matched against real Debian
 * advisories, validated by the CycloneDX library's own JSON validator (spec 1.5) and against the
 * official SPDX 2.3 JSON schema (see sbom-checks.ts), with the NTIA minimum elements checked.
 */

let t: TestApp;
let tenant: TenantFixture;
let key: string;
const MACHINE = 'sbom0000000000000000000000000001';
/** Parentheses and non-ASCII: SPDX's `Organization: name (contact)` syntax must not misread them. */
const ORGANISATION = 'Acme Corp (Europe) Ærøskøbing';
const NODE = `host:local:host.os.instance:${MACHINE}`;
const sbomUrl = (node = NODE, query = '') => `${nodePath(tenant.id, node)}/sbom${query}`;
/** The inventory, libnghttp2-14 at bookworm's release version (before the fix of CVE-2023-44487). */
const packages = () => inventoryPackages().map((p) => (p.name === 'libnghttp2-14' ? { ...p, version: '1.52.0-1', source_version: '1.52.0-1' } : p));

beforeAll(async () => {
  t = await createTestApp({ clockStart: '2026-11-23T13:00:00.000Z' });
  tenant = await buildTenant(t, { name: ORGANISATION });
  key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
  await loadVulnerabilityData(t);
  const host = { ...buildReport().host, machine_id: MACHINE, hostname: 'build-1' };
  const res = await sendReport(t, key, 'agent-sbom', buildReport({ agent_id: 'agent-sbom', host, packages: packages() }, '2026-11-23T12:00:00.000Z'));
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().packages.vulnerable).toBeGreaterThan(0);
});
afterAll(() => t.close());

describe('host SBOM', () => {
  it('is CycloneDX 1.5 JSON by default, valid for the CycloneDX validator, with the NTIA minimum elements and the matched vulnerabilities', async () => {
    const res = await call(t.app, tenant.users['read-only'].token, { method: 'GET', url: sbomUrl(), expect: 200 });
    expect(res.headers['content-type']).toMatch(/^application\/vnd\.cyclonedx\+json/);
    const bom = res.json();
    expect(await cycloneDxErrors(bom)).toBeNull();
    expect(ntiaGapsCycloneDx(bom)).toEqual([]);
    expect(bom.metadata).toMatchObject({ timestamp: '2026-11-23T13:00:00.000Z', authors: [{ name: ORGANISATION }], supplier: { name: ORGANISATION } });
    expect(bom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.5', version: 1, serialNumber: expect.stringMatching(/^urn:uuid:[0-9a-f-]{36}$/) });
    expect(bom.metadata.component).toMatchObject({ type: 'device', name: 'build-1', 'bom-ref': NODE, version: '2026-11-23T13:00:00.000Z', supplier: { name: ORGANISATION } });
    const libraries = bom.components.filter((c: { type: string }) => c.type === 'library');
    expect(libraries).toHaveLength(710);
    expect(bom.components.find((c: { type: string }) => c.type === 'operating-system')).toMatchObject({
      name: 'debian',
      version: '12',
      'bom-ref': `${NODE}#os`,
      supplier: { name: 'Debian GNU/Linux' },
      description: 'Debian GNU/Linux 12 (bookworm) on build-1',
    });
    const openssl = libraries.find((c: { name: string }) => c.name === 'openssl');
    expect(openssl.purl).toMatch(/^pkg:deb\/debian\/openssl@.+\?arch=amd64&distro=debian-12$/);
    expect(openssl).toMatchObject({ 'bom-ref': openssl.purl, supplier: { name: 'Debian GNU/Linux' } });
    expect(bom.vulnerabilities.length).toBeGreaterThan(0);
    // Every vulnerability points at components of this document.
    const refs = new Set(bom.components.map((c: { 'bom-ref': string }) => c['bom-ref']));
    for (const v of bom.vulnerabilities) for (const a of v.affects) expect(refs.has(a.ref)).toBe(true);
  });

  it('is SPDX 2.3 JSON with ?format=spdx, valid against the official schema', async () => {
    const res = await call(t.app, tenant.users['read-only'].token, { method: 'GET', url: sbomUrl(NODE, '?format=spdx'), expect: 200 });
    expect(res.headers['content-type']).toMatch(/^application\/spdx\+json/);
    const doc = res.json();
    expect(spdxErrors(doc)).toBeNull();
    expect(doc).toMatchObject({ spdxVersion: 'SPDX-2.3', dataLicense: 'CC0-1.0', SPDXID: 'SPDXRef-DOCUMENT', documentDescribes: ['SPDXRef-Host'] });
    // Host, operating system and the 710 packages; each package is CONTAINED by the host.
    expect(doc.packages).toHaveLength(712);
    const ids = new Set(doc.packages.map((p: { SPDXID: string }) => p.SPDXID));
    expect(ids.size).toBe(712);
    const contains = doc.relationships.filter((r: { relationshipType: string }) => r.relationshipType === 'CONTAINS');
    expect(contains).toHaveLength(711);
    for (const r of doc.relationships) expect(r.spdxElementId === 'SPDXRef-DOCUMENT' || ids.has(r.spdxElementId)).toBe(true);
    expect(ntiaGapsSpdx(doc)).toEqual([]);
    expect(doc.creationInfo.creators).toEqual([expect.stringMatching(/^Tool: controlgraph-/), 'Organization: Acme Corp Europe Ærøskøbing']);
    const host = doc.packages.find((p: { SPDXID: string }) => p.SPDXID === 'SPDXRef-Host');
    expect(host).toMatchObject({
      name: 'build-1',
      versionInfo: '2026-11-23T13:00:00.000Z',
      supplier: 'Organization: Acme Corp Europe Ærøskøbing',
      primaryPackagePurpose: 'DEVICE',
    });
    // A vulnerable package points at the vulnerability's page in the database it was matched from.
    const nghttp2 = doc.packages.find((p: { name: string }) => p.name === 'libnghttp2-14');
    expect(nghttp2.supplier).toBe('Organization: Debian GNU/Linux');
    const security = nghttp2.externalRefs.filter((r: { referenceCategory: string }) => r.referenceCategory === 'SECURITY');
    expect(security).toEqual(
      expect.arrayContaining([
        { referenceCategory: 'SECURITY', referenceType: 'advisory', referenceLocator: 'https://security-tracker.debian.org/tracker/CVE-2023-44487', comment: 'CVE-2023-44487' },
        { referenceCategory: 'SECURITY', referenceType: 'advisory', referenceLocator: 'https://nvd.nist.gov/vuln/detail/CVE-2023-44487', comment: 'CVE-2023-44487' },
      ]),
    );
  });

  it('describes each vulnerability: its source database, CVSS ratings, description, fixed versions and affected ranges', async () => {
    const bom = (await call(t.app, tenant.admin.token, { method: 'GET', url: sbomUrl(), expect: 200 })).json();
    const byId = new Map(bom.vulnerabilities.map((v: { id: string }) => [v.id, v]));
    const refs = new Map(bom.components.map((c: { 'bom-ref': string; name: string }) => [c['bom-ref'], c.name]));
    // Matched through Debian's records (the CVE's own and DSA-5570-1): Debian's tracker, not NVD, is the source.
    const rapidReset = byId.get('CVE-2023-44487') as Record<string, any>;
    expect(rapidReset).toMatchObject({
      'bom-ref': 'vuln:CVE-2023-44487',
      source: { name: 'Debian Security Tracker', url: 'https://security-tracker.debian.org/tracker/CVE-2023-44487' },
      ratings: [
        { source: { name: 'Debian Security Tracker' }, score: 7.5, severity: 'high', method: 'CVSSv31', vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H' },
        expect.objectContaining({ method: 'other' }),
      ],
      recommendation: 'Upgrade nghttp2 to 1.52.0-1+deb12u1 or later (Debian:12).',
    });
    expect(rapidReset.description).toMatch(/HTTP\/2 protocol allows a denial of service/);
    expect(rapidReset.references).toEqual(
      expect.arrayContaining([
        { id: 'DSA-5570-1', source: { name: 'Debian Security Tracker', url: 'https://security-tracker.debian.org/tracker/DSA-5570-1' } },
        { id: 'CVE-2023-44487', source: { name: 'NVD', url: 'https://nvd.nist.gov/vuln/detail/CVE-2023-44487' } },
      ]),
    );
    expect(rapidReset.workaround).toBeUndefined();
    expect(rapidReset.affects).toHaveLength(1);
    expect(refs.get(rapidReset.affects[0].ref)).toBe('libnghttp2-14');
    expect(rapidReset.affects[0].versions).toEqual([
      { version: '1.52.0-1', status: 'affected' },
      { range: 'vers:deb/<1.52.0-1+deb12u1', status: 'affected' },
      { version: '1.52.0-1+deb12u1', status: 'unaffected' },
    ]);
    // No fix published, no CVSS: Debian's urgency is the rating; the seven binutils binaries are affected.
    const binutils = byId.get('CVE-2025-1180') as Record<string, any>;
    expect(binutils).toMatchObject({
      source: { name: 'Debian Security Tracker', url: 'https://security-tracker.debian.org/tracker/CVE-2025-1180' },
      ratings: [{ severity: 'low', method: 'other', justification: 'Debian Security Tracker urgency: unimportant' }],
      recommendation: 'No fixed version of binutils is published for Debian:12 yet.',
      workaround: expect.stringContaining('watch https://security-tracker.debian.org/tracker/CVE-2025-1180'),
    });
    expect(binutils.affects.map((a: { ref: string }) => refs.get(a.ref)).sort()).toEqual([
      'binutils',
      'binutils-common',
      'binutils-x86-64-linux-gnu',
      'libbinutils',
      'libctf-nobfd0',
      'libctf0',
      'libgprofng0',
    ]);
    for (const a of binutils.affects)
      expect(a.versions).toEqual([
        { version: '2.40-2', status: 'affected' },
        { range: 'vers:deb/*', status: 'affected' },
      ]);
    // Every vulnerability names its source and what it affects; none claims NVD for a Debian match.
    for (const v of bom.vulnerabilities) {
      expect(v.source.name, v.id).toBe('Debian Security Tracker');
      expect(v.affects.length).toBeGreaterThan(0);
    }
    // The document's vulnerabilities are the host's CVE findings' (one finding per source package and CVE).
    const findings = await call(t.app, tenant.admin.token, {
      method: 'GET',
      url: `/api/v1/tenants/${tenant.id}/findings?status=open&per_page=500&resource_id=${encodeURIComponent(NODE)}`,
      expect: 200,
    });
    const findingCves = new Set(
      (findings.json().items as Array<{ rule_id: string; cve_ids: string[] }>).filter((f) => f.rule_id.startsWith('host-vuln-')).flatMap((f) => f.cve_ids),
    );
    expect(new Set(bom.vulnerabilities.map((v: { id: string }) => v.id))).toEqual(findingCves);
  });

  it('keeps its serial number and counts a version up when the inventory changes', async () => {
    const before = (await call(t.app, tenant.admin.token, { method: 'GET', url: sbomUrl(), expect: 200 })).json();
    const host = { ...buildReport().host, machine_id: MACHINE, hostname: 'build-1' };
    const fewer = packages().slice(0, 700);
    const res = await sendReport(t, key, 'agent-sbom', buildReport({ agent_id: 'agent-sbom', host, packages: fewer }, '2026-11-23T12:05:00.000Z'));
    expect(res.json()).toMatchObject({ packages: { removed: 10 }, sbom_version: 2 });
    const after = (await call(t.app, tenant.admin.token, { method: 'GET', url: sbomUrl(), expect: 200 })).json();
    expect(after.serialNumber).toBe(before.serialNumber);
    expect(after.version).toBe(2);
    expect(after.components.filter((c: { type: string }) => c.type === 'library')).toHaveLength(700);
    expect(await cycloneDxErrors(after)).toBeNull();
  });

  it('answers 404 for an unknown node and for a node without agent data, 400 naming the formats for an unknown format', async () => {
    const unknown = await call(t.app, tenant.admin.token, { method: 'GET', url: sbomUrl('host:local:host.os.instance:nope'), expect: 404 });
    expect(unknown.json().error.message).toBe('node not found');
    const plain = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/nodes`,
      payload: { provider: 'aws', region: 'eu-west-1', type: 'aws.s3.bucket', native_id: 'no-agent-bucket', name: 'no-agent-bucket' },
      expect: 201,
    });
    const noAgent = await call(t.app, tenant.admin.token, { method: 'GET', url: sbomUrl(plain.json().id), expect: 404 });
    expect(noAgent.json().error.message).toBe('this node has no software inventory (no agent reports on it)');
    for (const format of ['swid', 'xml', 'CycloneDX']) {
      const bad = await call(t.app, tenant.admin.token, { method: 'GET', url: sbomUrl(NODE, `?format=${format}`), expect: 400 });
      expect(bad.json().error).toMatchObject({
        code: 'BAD_REQUEST',
        message: `unknown SBOM format "${format}": the formats are cyclonedx (CycloneDX 1.5 JSON, the default) and spdx (SPDX 2.3 JSON)`,
      });
    }
  });

  it('needs nodes:read, and another tenant sees no such node', async () => {
    await call(t.app, null, { method: 'GET', url: sbomUrl(), expect: 401 });
    const agentKey = await call(t.app, key, { method: 'GET', url: sbomUrl(), expect: 403 });
    expect(agentKey.json().error.message).toBe('missing permission nodes:read');
    const other = await buildTenant(t);
    await call(t.app, other.admin.token, { method: 'GET', url: `${nodePath(other.id, NODE)}/sbom`, expect: 404 });
  });
});
