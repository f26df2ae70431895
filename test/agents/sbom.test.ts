import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { buildReport, fixture, inventoryPackages, loadVulnerabilityData, nodePath, sendReport } from './helpers.js';

/**
 * GET /tenants/{tenantID}/nodes/{id}/sbom of a host with a real inventory (the 710 dpkg packages of a
 * Debian 12 machine) matched against real Debian advisories, validated against the official JSON
 * schemas of CycloneDX 1.5 and SPDX 2.3 (test/fixtures/agents/schemas, see SOURCES.md there).
 */

const schema = (name: string) => JSON.parse(readFileSync(fixture(`schemas/${name}`), 'utf8')) as Record<string, unknown>;

function validators(): { cyclonedx: ValidateFunction; spdx: ValidateFunction } {
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv) => Ajv)(ajv);
  // Two draft-2019 formats CycloneDX uses that ajv-formats lacks: an IRI is a URI that may hold
  // non-ASCII characters (no spaces, controls or the characters RFC 3987 excludes).
  ajv.addFormat('iri-reference', (value: string) => !/[\s<>"{}|\\^`]/u.test(value) && [...value].every((c) => c.charCodeAt(0) >= 0x20));
  ajv.addFormat('idn-email', /^[^\s@]+@[^\s@]+$/u);
  // bom-1.5 refers to its companions by their file names in the package (see SOURCES.md).
  ajv.addSchema({ ...schema('spdx.SNAPSHOT.schema.json'), $id: 'http://cyclonedx.org/schema/spdx.SNAPSHOT.schema.json' });
  ajv.addSchema({ ...schema('jsf-0.82.SNAPSHOT.schema.json'), $id: 'http://cyclonedx.org/schema/jsf-0.82.SNAPSHOT.schema.json' });
  return { cyclonedx: ajv.compile(schema('bom-1.5.SNAPSHOT.schema.json')), spdx: ajv.compile(schema('spdx-schema-2.3.json')) };
}

let t: TestApp;
let tenant: TenantFixture;
let key: string;
let validate: ReturnType<typeof validators>;
const MACHINE = 'sbom0000000000000000000000000001';
const NODE = `host:local:host.os.instance:${MACHINE}`;
const sbomUrl = (node = NODE, query = '') => `${nodePath(tenant.id, node)}/sbom${query}`;

beforeAll(async () => {
  t = await createTestApp({ clockStart: '2026-11-23T13:00:00.000Z' });
  tenant = await buildTenant(t);
  key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
  await loadVulnerabilityData(t);
  validate = validators();
  const host = { ...buildReport().host, machine_id: MACHINE, hostname: 'build-1' };
  const res = await sendReport(t, key, 'agent-sbom', buildReport({ agent_id: 'agent-sbom', host, packages: inventoryPackages() }, '2026-11-23T12:00:00.000Z'));
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().packages.vulnerable).toBeGreaterThan(0);
});
afterAll(() => t.close());

describe('host SBOM', () => {
  it('is CycloneDX 1.5 JSON by default, valid against the official schema, with the matched vulnerabilities', async () => {
    const res = await call(t.app, tenant.users['read-only'].token, { method: 'GET', url: sbomUrl(), expect: 200 });
    expect(res.headers['content-type']).toMatch(/^application\/vnd\.cyclonedx\+json/);
    const bom = res.json();
    expect(validate.cyclonedx(bom), JSON.stringify(validate.cyclonedx.errors?.slice(0, 5))).toBe(true);
    expect(bom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.5', version: 1, serialNumber: expect.stringMatching(/^urn:uuid:[0-9a-f-]{36}$/) });
    expect(bom.metadata.component).toMatchObject({ type: 'device', name: 'build-1', 'bom-ref': NODE });
    const libraries = bom.components.filter((c: { type: string }) => c.type === 'library');
    expect(libraries).toHaveLength(710);
    expect(bom.components.find((c: { type: string }) => c.type === 'operating-system')).toMatchObject({ name: 'debian', version: '12' });
    const openssl = libraries.find((c: { name: string }) => c.name === 'openssl');
    expect(openssl.purl).toMatch(/^pkg:deb\/debian\/openssl@.+\?arch=amd64&distro=debian-12$/);
    expect(bom.vulnerabilities.length).toBeGreaterThan(0);
    // Every vulnerability points at components of this document.
    const refs = new Set(bom.components.map((c: { 'bom-ref': string }) => c['bom-ref']));
    for (const v of bom.vulnerabilities) for (const a of v.affects) expect(refs.has(a.ref)).toBe(true);
  });

  it('is SPDX 2.3 JSON with ?format=spdx, valid against the official schema', async () => {
    const res = await call(t.app, tenant.users['read-only'].token, { method: 'GET', url: sbomUrl(NODE, '?format=spdx'), expect: 200 });
    expect(res.headers['content-type']).toMatch(/^application\/spdx\+json/);
    const doc = res.json();
    expect(validate.spdx(doc), JSON.stringify(validate.spdx.errors?.slice(0, 5))).toBe(true);
    expect(doc).toMatchObject({ spdxVersion: 'SPDX-2.3', dataLicense: 'CC0-1.0', SPDXID: 'SPDXRef-DOCUMENT', documentDescribes: ['SPDXRef-Host'] });
    // Host, operating system and the 710 packages; each package is CONTAINED by the host.
    expect(doc.packages).toHaveLength(712);
    const ids = new Set(doc.packages.map((p: { SPDXID: string }) => p.SPDXID));
    expect(ids.size).toBe(712);
    const contains = doc.relationships.filter((r: { relationshipType: string }) => r.relationshipType === 'CONTAINS');
    expect(contains).toHaveLength(711);
    for (const r of doc.relationships) expect(r.spdxElementId === 'SPDXRef-DOCUMENT' || ids.has(r.spdxElementId)).toBe(true);
    const withAdvisory = doc.packages.filter((p: { externalRefs?: Array<{ referenceCategory: string }> }) => p.externalRefs?.some((r) => r.referenceCategory === 'SECURITY'));
    expect(withAdvisory.length).toBeGreaterThan(0);
  });

  it('keeps its serial number and counts a version up when the inventory changes', async () => {
    const before = (await call(t.app, tenant.admin.token, { method: 'GET', url: sbomUrl(), expect: 200 })).json();
    const host = { ...buildReport().host, machine_id: MACHINE, hostname: 'build-1' };
    const fewer = inventoryPackages().slice(0, 700);
    const res = await sendReport(t, key, 'agent-sbom', buildReport({ agent_id: 'agent-sbom', host, packages: fewer }, '2026-11-23T12:05:00.000Z'));
    expect(res.json()).toMatchObject({ packages: { removed: 10 }, sbom_version: 2 });
    const after = (await call(t.app, tenant.admin.token, { method: 'GET', url: sbomUrl(), expect: 200 })).json();
    expect(after.serialNumber).toBe(before.serialNumber);
    expect(after.version).toBe(2);
    expect(after.components.filter((c: { type: string }) => c.type === 'library')).toHaveLength(700);
    expect(validate.cyclonedx(after)).toBe(true);
  });

  it('answers 404 for an unknown node and for a node without agent data, 400 for an unknown format', async () => {
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
    const bad = await call(t.app, tenant.admin.token, { method: 'GET', url: sbomUrl(NODE, '?format=swid'), expect: 400 });
    expect(bad.json().error.code).toBe('BAD_REQUEST');
  });

  it('needs nodes:read, and another tenant sees no such node', async () => {
    await call(t.app, null, { method: 'GET', url: sbomUrl(), expect: 401 });
    const agentKey = await call(t.app, key, { method: 'GET', url: sbomUrl(), expect: 403 });
    expect(agentKey.json().error.message).toBe('missing permission nodes:read');
    const other = await buildTenant(t);
    await call(t.app, other.admin.token, { method: 'GET', url: `${nodePath(other.id, NODE)}/sbom`, expect: 404 });
  });
});
