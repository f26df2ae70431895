import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { putEdges, putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { builtinRule } from '../../src/modules/compliance/rule-catalog.js';

let t: TestApp;
let tenant: TenantFixture;
let token: string;
const sg = fixtureNode('aws-ec2-sg-no-ssh-from-internet', 'violating', 'sg-open');
const exposedInstance = fixtureNode('aws-ec2-instance-imdsv2-required', 'violating', 'i-exposed');
const hiddenInstance = fixtureNode('aws-ec2-instance-imdsv2-required', 'violating', 'i-hidden');
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
  await putNodes(t, token, tenant.id, [
    sg,
    exposedInstance,
    hiddenInstance,
    fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-a'),
    fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-b'),
    { ...fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-c'), region: 'ap-south-1' },
  ]);
  await putEdges(t, token, tenant.id, [{ source: nodeIdOf(sg), target: nodeIdOf(exposedInstance), type: 'protects' }]);
  await audit(t, token, tenant.id);
});
afterAll(() => t.close());

describe('GET /findings/scored', () => {
  it('ranks findings by a 0-100 score with its factors; exposure comes from the graph', async () => {
    const res = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/scored?per_page=500`, expect: 200 });
    const items = res.json().items as Array<{ id: string; risk_score: number; risk_factors: Record<string, number>; severity: string }>;
    expect(items.length).toBeGreaterThan(3);
    const scores = items.map((i) => i.risk_score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    const rule = builtinRule('aws-ec2-instance-imdsv2-required')!;
    const exposed = items.find((i) => i.id === `${rule.id}:${nodeIdOf(exposedInstance)}`)!;
    const hidden = items.find((i) => i.id === `${rule.id}:${nodeIdOf(hiddenInstance)}`)!;
    expect(exposed.risk_factors).toMatchObject({ exposure: 10, kev: 0, epss: 0, criticality: 0 });
    expect(hidden.risk_factors.exposure).toBe(0);
    expect(exposed.risk_score).toBe(hidden.risk_score + 10);
    const sgFinding = items.find((i) => i.id.startsWith('aws-ec2-sg-no-ssh-from-internet:'))!;
    expect(sgFinding.risk_factors.exposure).toBe(10);
    for (const i of items) expect(i.risk_score).toBe(Math.min(100, Object.values(i.risk_factors).reduce((a, b) => a + b, 0)));
  });

  it("adds the criticality of the business services a resource's application belongs to", async () => {
    const base = `/api/v1/tenants/${tenant.id}`;
    const admin = tenant.admin.token;
    const app = (await call(t.app, admin, { method: 'POST', url: `${base}/applications`, payload: { name: 'hidden-app', filter: `native_id = "${hiddenInstance.native_id}"` }, expect: 201 })).json();
    const service = (await call(t.app, admin, { method: 'POST', url: `${base}/services`, payload: { name: 'payments', criticality: 'critical', application_ids: [app.id] }, expect: 201 })).json();
    const rule = builtinRule('aws-ec2-instance-imdsv2-required')!;
    const scored = async () => (await call(t.app, token, { url: `${base}/findings/scored?per_page=500`, expect: 200 })).json().items as Array<{ id: string; risk_score: number; risk_factors: Record<string, number> }>;
    const hidden = (await scored()).find((i) => i.id === `${rule.id}:${nodeIdOf(hiddenInstance)}`)!;
    const exposed = (await scored()).find((i) => i.id === `${rule.id}:${nodeIdOf(exposedInstance)}`)!;
    expect(hidden.risk_factors.criticality).toBe(10);
    expect(exposed.risk_factors.criticality).toBe(0);
    // A high-criticality service counts 6.
    await call(t.app, admin, { method: 'PUT', url: `${base}/services/${service.id}`, payload: { name: 'payments', criticality: 'high' }, expect: 200 });
    expect((await scored()).find((i) => i.id === hidden.id)!.risk_factors.criticality).toBe(6);
    await call(t.app, admin, { method: 'DELETE', url: `${base}/services/${service.id}`, expect: 204 });
  });

  it('filters by min_score', async () => {
    const res = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/scored?min_score=70`, expect: 200 });
    expect(res.json().items.every((i: { risk_score: number }) => i.risk_score >= 70)).toBe(true);
  });
});

describe('GET /findings/grouped', () => {
  it('groups one rule in one account and region, with a stable group id', async () => {
    const res = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/grouped?rule_id=aws-s3-bucket-versioning`, expect: 200 });
    const groups = res.json().items as Array<{ group_id: string; findings: number; region: string; resource_ids: string[]; label: string }>;
    expect(groups).toHaveLength(2);
    const main = groups.find((g) => g.findings === 2)!;
    expect(main.resource_ids).toEqual([nodeIdOf(fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-a')), nodeIdOf(fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-b'))]);
    expect(main.label).toMatch(/\(2 resources\)$/);
    expect(groups.find((g) => g.findings === 1)!.region).toBe('ap-south-1');
    await audit(t, token, tenant.id);
    const again = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/grouped?rule_id=aws-s3-bucket-versioning`, expect: 200 });
    expect(again.json().items.map((g: { group_id: string }) => g.group_id).sort()).toEqual(groups.map((g) => g.group_id).sort());
    const members = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings?group_id=${main.group_id}`, expect: 200 });
    expect(members.json().total).toBe(2);
  });
});

describe('GET /findings/{id}/terraform-patch', () => {
  const gitApply = (files: Record<string, string>, patch: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'cg-patch-'));
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    writeFileSync(join(dir, 'fix.patch'), patch);
    execFileSync('git', ['init', '-q'], { cwd: dir });
    execFileSync('git', ['apply', '--check', 'fix.patch'], { cwd: dir });
    execFileSync('git', ['apply', 'fix.patch'], { cwd: dir });
    return dir;
  };

  it('patches a generated resource block when the Terraform source is unknown', async () => {
    const id = `aws-s3-bucket-versioning:${nodeIdOf(fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-a'))}`;
    const res = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}/terraform-patch`, expect: 200 });
    const body = res.json();
    expect(body).toMatchObject({ finding_id: id, strategy: 'generated', base: { path: expect.stringMatching(/^generated\//) } });
    const dir = gitApply({ [body.base.path]: body.base.content }, body.patch);
    expect(readFileSync(join(dir, body.path), 'utf8')).toMatch(/aws_s3_bucket_versioning/);
  });

  it('patches the Terraform file the node came from, leaving the rest of it alone', async () => {
    const main = `terraform {\n  required_version = ">= 1.5"\n}\n\n# Logs\nresource "aws_s3_bucket" "logs" {\n  bucket = "bucket-tf"\n  tags = {\n    env = "prod"\n  }\n}\n\nresource "aws_sqs_queue" "q" {\n  name = "q"\n}\n`;
    const node = { ...fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-tf'), source: { kind: 'terraform', address: 'aws_s3_bucket.logs', file: 'main.tf', content: main } };
    await putNodes(t, token, tenant.id, [node]);
    await audit(t, token, tenant.id);
    const id = `aws-s3-bucket-versioning:${nodeIdOf(node)}`;
    const remediation = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}/remediation`, expect: 200 });
    expect(remediation.json().terraform_patch_available).toBe(true);
    const body = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}/terraform-patch`, expect: 200 })).json();
    expect(body).toMatchObject({ strategy: 'source', path: 'main.tf', base: null });
    const dir = gitApply({ 'main.tf': main }, body.patch);
    const after = readFileSync(join(dir, 'main.tf'), 'utf8');
    expect(after).toContain('resource "aws_s3_bucket_versioning"');
    expect(after.startsWith(main.slice(0, main.indexOf('resource "aws_sqs_queue"')).split('\n').slice(0, 11).join('\n'))).toBe(true);
    expect(after).toContain('resource "aws_sqs_queue" "q" {\n  name = "q"\n}\n');
  });

  it('404 for a finding whose rule has no Terraform fix, and for an unknown finding', async () => {
    const id = `aws-ec2-sg-no-ssh-from-internet:${nodeIdOf(sg)}`;
    const rule = builtinRule('aws-ec2-sg-no-ssh-from-internet')!;
    if (!rule.definition?.terraform) {
      const res = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}/terraform-patch` });
      expect(res.statusCode).toBe(404);
      expect((await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(id)}/remediation` })).json().terraform_patch_available).toBe(false);
    }
    expect((await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/findings/x:y/terraform-patch` })).statusCode).toBe(404);
  });
});
