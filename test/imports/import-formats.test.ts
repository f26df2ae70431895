import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { multipart } from '../questionnaires/helpers.js';
import { projectPath } from '../../src/platform/paths.js';

/**
 * Every format beside Prowler's OCSF (imports.test.ts) through POST /imports, detected from the
 * file, on the real samples (test/fixtures/imports/SOURCES*.md): the import's counts, the findings
 * of each source on their nodes, and, for AWS Config items, our own rules firing on the nodes the
 * import created (the audit an import that changes the graph runs).
 */

const fixture = (...path: string[]) => readFileSync(projectPath('test', 'fixtures', 'imports', ...path));
const api = (tenant: TenantFixture, path: string) => `/api/v1/tenants/${tenant.id}${path}`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function importFile(tenant: TenantFixture, content: Buffer, filename: string) {
  const body = multipart({}, { filename, contentType: 'application/json', content });
  const res = await call(t.app, tenant.admin.token, { method: 'POST', url: api(tenant, '/imports'), payload: body.payload, headers: body.headers });
  expect(res.statusCode, res.body).toBe(202);
  await t.drain();
  const done = (await call(t.app, tenant.admin.token, { url: res.json().status_url, expect: 200 })).json();
  expect(done.status, JSON.stringify(done)).toBe('succeeded');
  return done as Record<string, unknown>;
}

async function findings(tenant: TenantFixture, query: string) {
  return (await call(t.app, tenant.admin.token, { url: api(tenant, `/findings?per_page=500&${query.includes('status=') ? query : `status=all&${query}`}`), expect: 200 })).json()
    .items as Array<Record<string, any>>;
}

describe('POST /imports: the other formats', () => {
  it('Security Hub findings as a recorded GetFindings call ({status_code, data}): GuardDuty findings on their instance', async () => {
    const tenant = await buildTenant(t);
    const response = JSON.parse(fixture('securityhub-guardduty.json').toString('utf8'));
    const recorded = Buffer.from(JSON.stringify({ status_code: 200, data: response }));
    const done = await importFile(tenant, recorded, 'get-findings.json');
    expect(done).toMatchObject({ format: 'securityhub-asff', counts: { records: 4, errors: 0 } });
    const found = await findings(tenant, 'source=guardduty');
    expect(found.length).toBeGreaterThan(0);
    expect(found.find((f) => f.source_check_id === 'DefenseEvasion:EC2-UnusualDNSResolver')).toMatchObject({
      source: 'guardduty',
      source_finding_id: 'arn:aws:guardduty:us-east-1:123456789012:detector/123456789/finding/123456789789',
      status: 'open',
    });
  });

  it("Prowler's ASFF output: its failed checks open, its passed ones do not", async () => {
    const tenant = await buildTenant(t);
    const done = await importFile(tenant, fixture('prowler3.3.0-output-non-ap-regions.asff.json'), 'prowler.asff.json');
    expect(done).toMatchObject({ format: 'prowler-asff', counts: { records: 527, errors: 0 } });
    const open = await findings(tenant, 'source=prowler&status=open');
    expect(open.length).toBeGreaterThan(0);
    expect(open.length).toBeLessThanOrEqual(208);
    expect(open.every((f) => f.source === 'prowler')).toBe(true);
  });

  it('SARIF from trivy config: findings of source trivy with their file location', async () => {
    const tenant = await buildTenant(t);
    const done = await importFile(tenant, fixture('trivy-config-terraform.sarif'), 'trivy.sarif');
    expect(done).toMatchObject({ format: 'sarif', counts: { records: 8, errors: 0 } });
    const found = await findings(tenant, 'source=trivy');
    expect(found.length).toBeGreaterThan(0);
    expect(found.find((f) => f.source_check_id === 'AWS-0086')).toMatchObject({ source: 'trivy', status: 'open', location: { uri: 'main.tf' } });
  });

  it('AWS Config items become nodes, and our rules fire on them in the audit the import runs', async () => {
    const tenant = await buildTenant(t);
    const items = ['rdk-example_ci-AWS_EC2_SecurityGroup.json', 'rdk-example_ci-AWS_S3_Bucket.json'].map((name) => JSON.parse(fixture('aws-config', name).toString('utf8')));
    const snapshot = Buffer.from(JSON.stringify({ fileVersion: '1.0', configSnapshotId: 'test', configurationItems: items }));
    const done = await importFile(tenant, snapshot, 'snapshot.json');
    expect(done).toMatchObject({ format: 'aws-config', counts: { nodes: 2, errors: 0 } });
    const nodes = (await call(t.app, tenant.admin.token, { url: api(tenant, '/nodes?per_page=50'), expect: 200 })).json().items as Array<{ type: string }>;
    expect(nodes.map((n) => n.type).sort()).toEqual(['aws.ec2.security_group', 'aws.s3.bucket']);
    const fired = (await findings(tenant, 'source=controlgraph')).map((f) => f.rule_id);
    expect(fired).toContain('aws-ec2-sg-no-ssh-from-internet');
    expect(fired).toContain('aws-s3-bucket-access-logging');
  });
});
