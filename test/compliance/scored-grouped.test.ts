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
    for (const i of items)
      expect(i.risk_score).toBe(
        Math.min(
          100,
          Object.values(i.risk_factors).reduce((a, b) => a + b, 0),
        ),
      );
  });

  it("adds the criticality of the business services a resource's application belongs to", async () => {
    const base = `/api/v1/tenants/${tenant.id}`;
    const admin = tenant.admin.token;
    const app = (
      await call(t.app, admin, { method: 'POST', url: `${base}/applications`, payload: { name: 'hidden-app', filter: `native_id = "${hiddenInstance.native_id}"` }, expect: 201 })
    ).json();
    const service = (
      await call(t.app, admin, { method: 'POST', url: `${base}/services`, payload: { name: 'payments', criticality: 'critical', application_ids: [app.id] }, expect: 201 })
    ).json();
    const rule = builtinRule('aws-ec2-instance-imdsv2-required')!;
    const scored = async () =>
      (await call(t.app, token, { url: `${base}/findings/scored?per_page=500`, expect: 200 })).json().items as Array<{
        id: string;
        risk_score: number;
        risk_factors: Record<string, number>;
      }>;
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
  interface Group {
    group_id: string;
    label: string;
    cause: string | null;
    findings: number;
    region: string;
    account_id: string;
    resource_ids: string[];
  }
  const base = () => `/api/v1/tenants/${tenant.id}`;
  const groupsOf = async (ruleId: string) => (await call(t.app, token, { url: `${base()}/findings/grouped?rule_id=${ruleId}&per_page=500`, expect: 200 })).json().items as Group[];
  const groupIdOf = async (ruleId: string, node: Parameters<typeof nodeIdOf>[0]) =>
    (await call(t.app, token, { url: `${base()}/findings/${encodeURIComponent(`${ruleId}:${nodeIdOf(node)}`)}`, expect: 200 })).json().group_id as string;

  // Console-made "launch-wizard" security groups open SSH to the world; instances using one are
  // exposed by it, so a tenant rule flags them and names the group as their cause, from the AWS
  // Config item (path) or from the graph's uses_security_group edges (edge).
  const SSH = 'aws-ec2-sg-no-ssh-from-internet';
  const BY_PATH = 'custom-instance-launch-wizard-sg';
  const BY_EDGE = 'custom-instance-launch-wizard-sg-edge';
  const wizardRule = (id: string, groupBy: Record<string, unknown> | null) => ({
    id,
    title: 'Instance is not behind a launch-wizard security group',
    finding_title: 'Instance is behind a launch-wizard security group',
    description: 'Security groups made by the console launch wizard admit SSH from anywhere.',
    severity: 'HIGH',
    resource_type: 'aws.ec2.instance',
    framework: 'soc2',
    control_id: 'CC6.6',
    condition: 'resource.properties.configuration.securityGroups.exists(g, g.groupName.startsWith("launch-wizard"))',
    remediation: { summary: 'Move the instance to a purpose-made security group.', steps: [] },
    group_by: groupBy,
  });
  const openGroup = (sgId: string) => fixtureNode(SSH, 'violating', sgId);
  const behind = (instanceId: string, sgId: string, wizard: number) => {
    const node = structuredClone(fixtureNode('aws-ec2-instance-imdsv2-required', 'violating', instanceId));
    (node.properties.configuration as Record<string, unknown>).securityGroups = [{ groupId: sgId, groupName: `launch-wizard-${wizard}` }];
    return node;
  };
  const sg1 = openGroup('sg-wizard1');
  const sg2 = openGroup('sg-wizard2');
  const webA = behind('i-web-a', 'sg-wizard1', 1);
  const webB = behind('i-web-b', 'sg-wizard1', 1);
  const admin = behind('i-admin', 'sg-wizard2', 2);

  beforeAll(async () => {
    const create = (payload: object) => call(t.app, token, { method: 'POST', url: `${base()}/rules`, payload, expect: 201 });
    const created = await create(wizardRule(BY_PATH, { cause: 'security group', path: 'configuration.securityGroups.groupId' }));
    expect(created.json().group_by).toEqual({ cause: 'security group', path: 'configuration.securityGroups.groupId' });
    await create(wizardRule(BY_EDGE, { cause: 'security group', edge: 'uses_security_group', node_type: 'aws.ec2.security_group' }));
    await putNodes(t, token, tenant.id, [sg1, sg2, webA, webB, admin]);
    await putEdges(t, token, tenant.id, [
      { source: nodeIdOf(webA), target: nodeIdOf(sg1), type: 'uses_security_group' },
      { source: nodeIdOf(webB), target: nodeIdOf(sg1), type: 'uses_security_group' },
      { source: nodeIdOf(admin), target: nodeIdOf(sg2), type: 'uses_security_group' },
    ]);
    await audit(t, token, tenant.id);
  });

  it('two instances behind one open security group are one group named by it; another group is another', async () => {
    for (const rule of [BY_PATH, BY_EDGE]) {
      const groups = await groupsOf(rule);
      expect(groups, rule).toHaveLength(2);
      const web = groups.find((g) => g.resource_ids.includes(nodeIdOf(webA)))!;
      expect(web).toMatchObject({ findings: 2, cause: 'security group sg-wizard1', resource_ids: [nodeIdOf(webA), nodeIdOf(webB)].sort() });
      expect(web.label).toBe('Instance is behind a launch-wizard security group — security group sg-wizard1 (2 resources)');
      const other = groups.find((g) => g.group_id !== web.group_id)!;
      expect(other).toMatchObject({ findings: 1, cause: 'security group sg-wizard2', resource_ids: [nodeIdOf(admin)] });
      expect(other.label).toMatch(/ — security group sg-wizard2 \(1 resource\)$/);
      const members = await call(t.app, token, { url: `${base()}/findings?group_id=${web.group_id}`, expect: 200 });
      expect(
        members
          .json()
          .items.map((f: { resource_id: string }) => f.resource_id)
          .sort(),
      ).toEqual([nodeIdOf(webA), nodeIdOf(webB)].sort());
    }
    // The group is what a group acceptance takes, and its label names the cause.
    const web = (await groupsOf(BY_EDGE)).find((g) => g.findings === 2)!;
    const acceptUrl = `${base()}/findings/groups/${web.group_id}/accept`;
    const expires_at = new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString();
    const accepted = await call(t.app, token, { method: 'POST', url: acceptUrl, payload: { reason: 'bastion hosts', owner: 'platform', expires_at }, expect: 201 });
    expect(accepted.json()).toMatchObject({ scope: 'group', group_id: web.group_id, group_label: web.label, snapshot: { resource_ids: web.resource_ids } });
    await call(t.app, token, { method: 'DELETE', url: acceptUrl, expect: 200 });
  });

  it('an open security group is its own cause: two of them in one account and region are two groups', async () => {
    expect(sg1.region).toBe(sg2.region);
    const groups = (await groupsOf(SSH)).filter((g) => g.cause === 'security group sg-wizard1' || g.cause === 'security group sg-wizard2');
    expect(groups.map((g) => [g.cause, g.findings])).toEqual(
      expect.arrayContaining([
        ['security group sg-wizard1', 1],
        ['security group sg-wizard2', 1],
      ]),
    );
    expect(new Set(groups.map((g) => g.group_id)).size).toBe(2);
    expect(groups.find((g) => g.cause === 'security group sg-wizard1')!.resource_ids).toEqual([nodeIdOf(sg1)]);
  });

  it('a rule without a cause keeps one group per account and region, with a stable group id', async () => {
    const groups = await groupsOf('aws-s3-bucket-versioning');
    expect(groups).toHaveLength(2);
    const main = groups.find((g) => g.findings === 2)!;
    expect(main.resource_ids).toEqual([
      nodeIdOf(fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-a')),
      nodeIdOf(fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-b')),
    ]);
    expect(main.cause).toBeNull();
    expect(main.label).toMatch(new RegExp(` — account ${main.account_id}, ${main.region} \\(2 resources\\)$`));
    expect(groups.find((g) => g.findings === 1)!.region).toBe('ap-south-1');
    const members = await call(t.app, token, { url: `${base()}/findings?group_id=${main.group_id}`, expect: 200 });
    expect(members.json().total).toBe(2);
  });

  it('group ids are stable across audits', async () => {
    const rules = [BY_PATH, BY_EDGE, SSH, 'aws-s3-bucket-versioning'];
    const before = await Promise.all(rules.map(async (r) => (await groupsOf(r)).map((g) => [g.group_id, g.resource_ids])));
    await audit(t, token, tenant.id);
    const after = await Promise.all(rules.map(async (r) => (await groupsOf(r)).map((g) => [g.group_id, g.resource_ids])));
    expect(after).toEqual(before);
  });

  it('an existing finding moves with its cause, and to account and region when its rule stops naming one', async () => {
    const webGroup = await groupIdOf(BY_PATH, webA);
    // The admin instance moves behind the first launch-wizard group.
    await putNodes(t, token, tenant.id, [behind('i-admin', 'sg-wizard1', 1)]);
    await audit(t, token, tenant.id);
    expect(await groupIdOf(BY_PATH, admin)).toBe(webGroup);
    expect((await groupsOf(BY_PATH)).map((g) => [g.group_id, g.findings, g.label])).toEqual([
      [webGroup, 3, 'Instance is behind a launch-wizard security group — security group sg-wizard1 (3 resources)'],
    ]);
    // The rule without group_by: the same findings, now one group per account and region.
    const { id: _id, ...update } = wizardRule(BY_PATH, null);
    void _id;
    const updated = await call(t.app, token, { method: 'PUT', url: `${base()}/rules/${BY_PATH}`, payload: update, expect: 200 });
    expect(updated.json().group_by).toBeNull();
    await audit(t, token, tenant.id);
    const [fallback, ...rest] = await groupsOf(BY_PATH);
    expect(rest).toEqual([]);
    expect(fallback).toMatchObject({
      findings: 3,
      cause: null,
      label: `Instance is behind a launch-wizard security group — account ${webA.account_id}, ${webA.region} (3 resources)`,
    });
    expect(fallback!.group_id).not.toBe(webGroup);
    expect(await groupIdOf(BY_PATH, webA)).toBe(fallback!.group_id);
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
    const node = {
      ...fixtureNode('aws-s3-bucket-versioning', 'violating', 'bucket-tf'),
      source: { kind: 'terraform', address: 'aws_s3_bucket.logs', file: 'main.tf', content: main },
    };
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
