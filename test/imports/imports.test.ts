import { gzipSync } from 'node:zlib';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { events } from '../harness/compliance.js';
import { multipart } from '../questionnaires/helpers.js';
import { projectPath } from '../../src/platform/paths.js';
import { importCommand } from '../../src/cli/import.js';
import { applyImport } from '../../src/modules/discovery/imports/apply-import.js';
import type { ImportItem, ImportedNode } from '../../src/modules/discovery/imports/import-record.js';
import { prowlerFinding } from '../../src/modules/discovery/imports/prowler-ocsf.js';

/**
 * Scanner imports (issue 27) over HTTP: POST /imports with Prowler's real OCSF samples
 * (test/fixtures/imports/SOURCES.md) and copies derived from them here (truncated, a record broken,
 * a record dropped), the job that applies them, and the findings, nodes and scores they become.
 */

const fixture = (name: string) => readFileSync(projectPath('test', 'fixtures', 'imports', name));
const AWS = fixture('prowler5-example_output_aws.ocsf.json');
const awsRecords = () => JSON.parse(AWS.toString('utf8')) as Array<Record<string, unknown>>;
// The samples are about 20 KB: a limit just above them shows the 413 without sending megabytes.
const MAX_BYTES = 30_000;

let t: TestApp;
let other: TenantFixture;

beforeAll(async () => {
  t = await createTestApp({ env: { CONTROLGRAPH_IMPORT_MAX_BYTES: String(MAX_BYTES) } });
  other = await buildTenant(t);
});
afterAll(async () => {
  await t.close();
});

const api = (tenantId: string, path: string) => `/api/v1/tenants/${tenantId}${path}`;

async function upload(tenant: TenantFixture, content: Buffer, fields: Record<string, string> = {}, filename = 'prowler.ocsf.json') {
  const body = multipart(fields, { filename, contentType: 'application/json', content });
  return call(t.app, tenant.admin.token, { method: 'POST', url: api(tenant.id, '/imports'), payload: body.payload, headers: body.headers });
}

/** Uploads, runs the job, and returns the finished import. */
async function importFile(tenant: TenantFixture, content: Buffer, fields: Record<string, string> = {}) {
  const res = await upload(tenant, content, fields);
  expect(res.statusCode, res.body).toBe(202);
  const created = res.json();
  expect(created).toMatchObject({ status: 'queued', format: 'prowler-ocsf' });
  await t.drain();
  const done = (await call(t.app, tenant.admin.token, { url: created.status_url, expect: 200 })).json();
  expect(done.status, JSON.stringify(done)).toBe('succeeded');
  return done;
}

async function findings(tenant: TenantFixture, query = 'status=all') {
  return (await call(t.app, tenant.admin.token, { url: api(tenant.id, `/findings?${query}&per_page=500`), expect: 200 })).json().items as Array<Record<string, unknown>>;
}

const withoutRecord = (index: number) => Buffer.from(JSON.stringify(awsRecords().filter((_, i) => i !== index)));

describe('POST /imports: Prowler OCSF', () => {
  it('imports the v5 AWS sample: failed checks become findings of source prowler on nodes', async () => {
    const tenant = await buildTenant(t);
    const done = await importFile(tenant, AWS);
    expect(done).toMatchObject({ source: 'prowler', file_name: 'prowler.ocsf.json', size_bytes: AWS.length, errors: [], error: null });
    expect(done.counts).toEqual({ records: 5, findings_created: 2, findings_updated: 0, findings_resolved: 0, findings_reopened: 0, nodes: 2, errors: 0 });

    const open = await findings(tenant, 'status=open');
    expect(open.map((f) => f.rule_id).sort()).toEqual(['prowler:accessanalyzer_enabled', 'prowler:account_maintain_different_contact_details_to_security_billing_and_operations']);
    const analyzer = open.find((f) => f.rule_id === 'prowler:accessanalyzer_enabled')!;
    expect(analyzer).toMatchObject({
      source: 'prowler',
      source_check_id: 'accessanalyzer_enabled',
      source_finding_id: '<finding_uid>',
      title: 'IAM Access Analyzer in account <account_uid> is not enabled.',
      severity: 'LOW',
      account_id: '<account_uid>',
      location: null,
    });
    expect(analyzer.details).toMatchObject({ requirements: expect.arrayContaining([{ framework: 'CIS-1.4', requirement: '1.20' }]) });
    const node = (await call(t.app, tenant.admin.token, { url: api(tenant.id, `/nodes/${encodeURIComponent(analyzer.resource_id as string)}`), expect: 200 })).json();
    expect(node).toMatchObject({ provider: 'aws', native_id: '<resource_uid>', account_id: '<account_uid>' });
    expect((await events(t, tenant.id, 'finding.created')).length).toBe(2);
    expect(await findings(tenant, 'status=open&source=prowler')).toHaveLength(2);
    expect(await findings(tenant, 'status=open&source=controlgraph')).toHaveLength(0);

    const list = (await call(t.app, tenant.admin.token, { url: api(tenant.id, '/imports'), expect: 200 })).json();
    expect(list).toMatchObject({ total: 1, items: [{ id: done.id, status: 'succeeded' }] });
    // The list's filters (the console keeps them in its URL).
    const listed = async (query: string) => (await call(t.app, tenant.admin.token, { url: api(tenant.id, `/imports?${query}`), expect: 200 })).json().total;
    expect(await listed('status=succeeded&format=prowler-ocsf')).toBe(1);
    expect(await listed('status=failed')).toBe(0);
    expect(await listed('format=sarif')).toBe(0);
    await call(t.app, tenant.admin.token, { url: api(tenant.id, '/imports?status=done'), expect: 400 });
  });

  it('the same file again changes nothing: no events, no counts, the same updated_at', async () => {
    const tenant = await buildTenant(t);
    await importFile(tenant, AWS);
    const before = await findings(tenant);
    const eventsBefore = (await events(t, tenant.id)).length;
    t.clock.advance(60_000);
    const again = await importFile(tenant, AWS);
    expect(again.counts).toEqual({ records: 5, findings_created: 0, findings_updated: 0, findings_resolved: 0, findings_reopened: 0, nodes: 0, errors: 0 });
    const after = await findings(tenant);
    expect(after.map((f) => [f.id, f.status, f.updated_at])).toEqual(before.map((f) => [f.id, f.status, f.updated_at]));
    expect((await events(t, tenant.id)).length).toBe(eventsBefore);
  });

  it('a re-import in which a check no longer fails on a resource resolves its finding; bringing it back reopens it', async () => {
    const tenant = await buildTenant(t);
    await importFile(tenant, AWS);
    // The same scan, except that the access analyzer check now fails on another resource only.
    const moved = awsRecords();
    (moved[0]!.resources as Array<Record<string, unknown>>)[0]!.uid = '<other_resource_uid>';
    t.clock.advance(60_000);
    const without = await importFile(tenant, Buffer.from(JSON.stringify(moved)));
    expect(without.counts).toMatchObject({ records: 5, findings_created: 1, findings_resolved: 1, findings_reopened: 0 });
    const [resolved] = await findings(tenant, 'status=resolved&rule_id=prowler:accessanalyzer_enabled');
    expect(resolved).toMatchObject({ status: 'resolved', resolved_by: 'import', resource_name: '<resource_name>' });
    expect(await events(t, tenant.id, 'finding.resolved')).toHaveLength(1);

    t.clock.advance(60_000);
    const back = await importFile(tenant, AWS);
    expect(back.counts).toMatchObject({ findings_created: 0, findings_resolved: 1, findings_reopened: 1 });
    const [reopened] = await findings(tenant, 'status=open&rule_id=prowler:accessanalyzer_enabled');
    expect(reopened).toMatchObject({ id: resolved!.id, reopen_count: 1 });
    expect(await events(t, tenant.id, 'finding.reopened')).toHaveLength(1);
  });

  it('a check the re-import does not run at all keeps its findings open', async () => {
    const tenant = await buildTenant(t);
    await importFile(tenant, AWS);
    t.clock.advance(60_000);
    const without = await importFile(tenant, withoutRecord(0));
    expect(without.counts).toMatchObject({ records: 4, findings_created: 0, findings_resolved: 0 });
    expect(await findings(tenant, 'status=open')).toHaveLength(2);
  });

  it('a pass record resolves the open finding of its check and resource', async () => {
    const tenant = await buildTenant(t);
    await importFile(tenant, AWS);
    const passing = awsRecords();
    passing[0]!.status_code = 'PASS';
    passing[0]!.status_detail = 'IAM Access Analyzer in account <account_uid> is enabled.';
    t.clock.advance(60_000);
    const done = await importFile(tenant, Buffer.from(JSON.stringify(passing)));
    expect(done.counts).toMatchObject({ findings_resolved: 1 });
    expect((await findings(tenant, 'status=resolved'))[0]).toMatchObject({ rule_id: 'prowler:accessanalyzer_enabled' });
  });

  it('an imported failure mapped to one of our controls counts in the framework score', async () => {
    const tenant = await buildTenant(t);
    const mapped = awsRecords();
    // The samples map to no control of our catalogs: this copy states NIST SP 800-53 AC-2(1) as Prowler's NIST file names it.
    (mapped[0]!.unmapped as Record<string, unknown>).compliance = { 'NIST-800-53-Revision-5': ['ac_2_1'], 'CIS-1.4': ['1.20'] };
    await importFile(tenant, Buffer.from(JSON.stringify(mapped)));
    const [finding] = await findings(tenant, 'status=open&rule_id=prowler:accessanalyzer_enabled');
    expect(finding).toMatchObject({ framework: 'nist-800-53', control_id: 'AC-2(1)' });
    const status = (await call(t.app, tenant.admin.token, { url: api(tenant.id, '/controls/status?framework=nist-800-53&automated_state=failing'), expect: 200 })).json();
    expect(status.by_framework['nist-800-53'].findings).toBeGreaterThanOrEqual(1);
    expect(status.by_framework['nist-800-53'].failing_controls).toBeGreaterThanOrEqual(1);
    expect(status.controls.items.map((c: { control_id: string }) => c.control_id)).toContain('AC-2(1)');
  });

  it('accepts a gzipped file', async () => {
    const tenant = await buildTenant(t);
    const done = await importFile(tenant, gzipSync(AWS));
    expect(done.counts).toMatchObject({ records: 5, findings_created: 2 });
    expect(done.size_bytes).toBe(AWS.length);
  });

  it('lists a bad record among the errors and imports the others', async () => {
    const tenant = await buildTenant(t);
    const broken = awsRecords() as unknown[];
    broken[1] = 'not a finding';
    const done = await importFile(tenant, Buffer.from(JSON.stringify(broken)));
    expect(done.counts).toMatchObject({ records: 5, findings_created: 2, errors: 1 });
    expect(done.errors).toEqual([{ record: 1, message: expect.stringContaining('string') }]);
  });

  it('reads the v4 sample and the format named in the form', async () => {
    const tenant = await buildTenant(t);
    const done = await importFile(tenant, fixture('prowler4.2.1-one_vuln.ocsf.json'), { format: 'prowler-ocsf' });
    expect(done.counts).toMatchObject({ records: 1, findings_created: 1 });
    const [finding] = await findings(tenant);
    expect(finding).toMatchObject({ region: 'us-east-1', account_id: '123456789012', severity: 'HIGH', resource_name: 'myAdministratorExecutionRole' });
  });
});

describe('POST /imports: refusals', () => {
  it('a truncated file is 400 naming the byte offset, and no import is kept', async () => {
    const tenant = await buildTenant(t);
    const res = await upload(tenant, AWS.subarray(0, 5000));
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/byte 5000/);
    const list = (await call(t.app, tenant.admin.token, { url: api(tenant.id, '/imports'), expect: 200 })).json();
    expect(list.total).toBe(0);
  });

  it('a file over CONTROLGRAPH_IMPORT_MAX_BYTES is 413', async () => {
    const tenant = await buildTenant(t);
    const doubled = Buffer.from(JSON.stringify([...awsRecords(), ...awsRecords(), ...awsRecords()]));
    expect(doubled.length).toBeGreaterThan(MAX_BYTES);
    const res = await upload(tenant, doubled);
    expect(res.statusCode).toBe(413);
    expect((await call(t.app, tenant.admin.token, { url: api(tenant.id, '/imports'), expect: 200 })).json().total).toBe(0);
  });

  it('an unknown format name or an unrecognisable file is 400 listing the formats', async () => {
    const tenant = await buildTenant(t);
    const named = await upload(tenant, AWS, { format: 'nessus' });
    expect(named.statusCode).toBe(400);
    expect(named.json().error.message).toMatch(/prowler-ocsf/);
    const unknown = await upload(tenant, Buffer.from('{"hello": "world"}'));
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.message).toMatch(/prowler-ocsf/);
  });

  it('another tenant cannot read an import (404)', async () => {
    const tenant = await buildTenant(t);
    const res = await upload(tenant, AWS);
    expect(res.statusCode).toBe(202);
    const id = res.json().id;
    expect((await call(t.app, other.admin.token, { url: api(other.id, `/imports/${id}`) })).statusCode).toBe(404);
    expect((await call(t.app, other.admin.token, { url: api(other.id, '/imports') })).json().total).toBe(0);
    expect((await call(t.app, other.admin.token, { url: api(tenant.id, `/imports/${id}`) })).statusCode).toBe(403);
  });

  it('needs the permission to create discovery jobs', async () => {
    const tenant = await buildTenant(t);
    const body = multipart({}, { filename: 'p.json', contentType: 'application/json', content: AWS });
    const res = await call(t.app, tenant.users['read-only'].token, { method: 'POST', url: api(tenant.id, '/imports'), payload: body.payload, headers: body.headers });
    expect(res.statusCode).toBe(403);
  });
});

describe('controlgraph import', () => {
  it("uploads through the service's API and waits for the import", async () => {
    const tenant = await buildTenant(t);
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const dir = mkdtempSync(join(tmpdir(), 'cg-import-cli-'));
    const file = join(dir, 'prowler.ocsf.json.gz');
    writeFileSync(file, gzipSync(AWS));
    writeFileSync(join(dir, 'token'), tenant.admin.token);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const stdout = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      let settled = false;
      const command = importCommand([file, '--tenant', tenant.id, '--server', base, '--token-file', join(dir, 'token')]).finally(() => {
        settled = true;
      });
      // The test app has no running worker: jobs run when drained.
      while (!settled) {
        await t.drain();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await command;
      expect(stdout.mock.calls.flat().join('\n')).toMatch(/succeeded: 5 records, 2 findings created/);
    } finally {
      stderr.mockRestore();
      stdout.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('applyImport with configuration items', () => {
  it('upserts node items with their edges, and attaches a finding to the node its ARN names', async () => {
    const tenant = await buildTenant(t);
    const scope = { tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId };
    const role = 'arn:aws:iam::123456789012:role/myAdministratorExecutionRole';
    const node = (id: string, arn: string, edges: ImportedNode['edges']): ImportedNode => ({
      kind: 'node',
      node: {
        id,
        provider: 'aws',
        region: 'us-east-1',
        type: 'aws_iam_role',
        native_id: id.split(':').pop()!,
        name: id,
        account_id: '123456789012',
        properties: { arn },
        tags: {},
      },
      edges,
    });
    const [record] = JSON.parse(fixture('prowler4.2.1-one_vuln.ocsf.json').toString('utf8')) as unknown[];
    const items: ImportItem[] = [
      node('aws:us-east-1:aws_iam_role:admin', role, [{ target: 'aws:us-east-1:aws_iam_role:other', type: 'trusts' }]),
      node('aws:us-east-1:aws_iam_role:other', 'arn:aws:iam::123456789012:role/other', [{ target: 'aws:us-east-1:aws_iam_role:admin', type: 'trusts' }]),
      prowlerFinding(record, 2),
    ];
    async function* stream() {
      yield* items;
    }
    const result = await applyImport(t.deps.database.db, t.clock, scope, stream(), async () => undefined);
    expect(result).toMatchObject({ records: 3, nodes: 2, findings_created: 1, errors_count: 0 });
    const [finding] = await findings(tenant);
    expect(finding).toMatchObject({ resource_id: 'aws:us-east-1:aws_iam_role:admin', resource_type: 'aws_iam_role' });
    const edges = (await call(t.app, tenant.admin.token, { url: api(tenant.id, '/edges'), expect: 200 })).json();
    expect(edges.total).toBe(2);
  });
});
