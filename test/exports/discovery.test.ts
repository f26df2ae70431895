import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, fresh, type Session, type TenantFixture } from '../harness/identity.js';
import { events } from '../harness/compliance.js';
import { projectPath } from '../../src/platform/paths.js';
import { AWS_SERVICES, awsInventory, type AwsService } from '../../src/modules/discovery/aws.js';
import { DISCOVERY_JOB } from '../../src/modules/discovery/discovery-service.js';
import { recorded, startAwsReplay, useAwsReplay, type AwsReplay } from './aws-recorded.js';

/**
 * Discovery jobs (/jobs) with the terraform-state plugin (a state written for
 * test/fixtures/terraform/discovery/main.tf) and the aws plugin (recorded responses of CloudMapper's
 * demo account; see aws-recorded.ts for what is played back and how).
 *
 * The tenant here reads with the service's own credentials (state_uri and aws without a cloud
 * connection), which the operator grants explicitly: CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS
 * names its slug. Tenant-supplied credentials are tested in discovery-credentials.test.ts.
 */

const TF_DIR = projectPath('test', 'fixtures', 'terraform', 'discovery');
const STATE = JSON.parse(readFileSync(`${TF_DIR}/terraform.tfstate`, 'utf8')) as {
  resources: Array<{ type: string; name: string; instances: Array<{ attributes: Record<string, unknown> }> }>;
};
const MAIN_TF = readFileSync(`${TF_DIR}/main.tf`, 'utf8');
// vpc, 2 subnets, 2 security groups, IAM role, instance, DB instance, KMS key, S3 bucket.
const MAPPED = 10;

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let replay: AwsReplay;
let restoreEnv: () => void;

const jobsUrl = (tenantId: string, path = '') => `/api/v1/tenants/${tenantId}/jobs${path}`;
const GRANTED = 'discovery-granted';

beforeAll(async () => {
  // A small body limit, to see the 413 of an oversized upload without sending megabytes.
  t = await createTestApp({ env: { CONTROLGRAPH_BODY_LIMIT_BYTES: String(256 * 1024), CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS: GRANTED } });
  tenant = await buildTenant(t, { name: GRANTED });
  expect(tenant.slug).toBe(GRANTED);
  other = await buildTenant(t);
  replay = await startAwsReplay();
  restoreEnv = useAwsReplay(replay.endpoint);
});
afterAll(async () => {
  restoreEnv();
  await replay.close();
  await t.close();
});

async function create(session: Session, body: Record<string, unknown>, expect = 201, tenantId = tenant.id) {
  return (await call(t.app, session.token, { method: 'POST', url: jobsUrl(tenantId), payload: body, expect })).json();
}
const get = async (job: { status_url: string }, session = tenant.admin) => (await call(t.app, session.token, { url: job.status_url, expect: 200 })).json();
const tfJob = (extra: Record<string, unknown> = {}, state: unknown = STATE) => ({
  name: 'shop terraform',
  plugins: ['terraform-state'],
  config: { 'terraform-state': { state, files: { 'main.tf': MAIN_TF }, ...extra } },
});

describe('terraform-state plugin', () => {
  it('creates pending, starts, discovers nodes and edges with their Terraform source, audits, and reports stats', async () => {
    const analyst = tenant.users['security-analyst'];
    const job = await create(analyst, tfJob());
    expect(job).toMatchObject({ status: 'pending', plugins: ['terraform-state'], attempts: 0, stats: null, error: null, queued_at: null, started_at: null });
    expect(job.status_url).toBe(jobsUrl(tenant.id, `/${job.id}`));
    // The upload is summarised, never echoed back.
    expect(job.config['terraform-state']).toMatchObject({ source: 'upload', state_kept: true, files: ['main.tf'] });
    expect(job.config['terraform-state'].state_bytes).toBe(Buffer.byteLength(JSON.stringify(STATE)));
    expect(JSON.stringify(job)).not.toContain('correct-horse-but-in-state');
    expect((await events(t, tenant.id, 'job.created')).map((e) => (e.data as { job: { id: string } }).job.id)).toContain(job.id);
    const audit = await t.deps.database.db.selectFrom('audit_logs').selectAll().where('target_id', '=', job.id).execute();
    expect(audit.map((a) => a.action)).toEqual(['discovery_job.created']);

    // Pending jobs do not run.
    expect(await t.drain()).toBe(0);
    const started = (await call(t.app, analyst.token, { method: 'POST', url: `${job.status_url}/start`, expect: 202 })).json();
    expect(started).toMatchObject({ status: 'queued' });
    expect(started.queued_at).not.toBeNull();
    await t.drain();

    const done = await get(job);
    expect(done).toMatchObject({ status: 'completed', attempts: 1, error: null });
    expect(done.stats).toEqual({ nodes_discovered: MAPPED, nodes_updated: 0, findings_created: done.stats.findings_created, findings_resolved: 0, duration_seconds: 0 });
    expect(done.stats.findings_created).toBeGreaterThan(3);
    expect(done.details).toMatchObject({ nodes_created: MAPPED, plugins: { 'terraform-state': { mapped: MAPPED, unmapped: 1, data_sources: 1, merged: 2 } } });
    expect(done.details.edges_discovered).toBeGreaterThan(5);
    expect(done.warnings).toEqual(['terraform-state: unmapped resource types skipped: aws_db_subnet_group']);
    // The uploaded state is dropped once the job ended.
    expect(done.config['terraform-state']).toMatchObject({ state_kept: false });
    const stored = await t.deps.database.db.selectFrom('discovery_jobs').select('config').where('id', '=', job.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored.config)).not.toContain('"resources"');

    // Nodes in the AWS Config model, with their Terraform origin and without secrets.
    const db = (
      await call(t.app, tenant.admin.token, {
        url: `/api/v1/tenants/${tenant.id}/nodes/${encodeURIComponent('aws:eu-west-1:aws.rds.db_instance:db-ABCDEFGHIJKLMNOPQRSTUVWXY1')}`,
        expect: 200,
      })
    ).json();
    expect(db.properties.configuration).toMatchObject({ dBInstanceIdentifier: 'shop-orders', storageEncrypted: true, backupRetentionPeriod: 0 });
    expect(JSON.stringify(db.properties)).not.toContain('correct-horse-but-in-state');
    expect(db.source).toMatchObject({ kind: 'terraform', address: 'aws_db_instance.orders', file: 'main.tf' });
    const edges = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/edges?per_page=100`, expect: 200 })).json();
    expect(edges.items.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['in_vpc', 'in_subnet', 'uses_security_group']));

    // The audit ran: findings exist, and a Terraform patch is offered from the kept source.
    const findings = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/findings?per_page=200`, expect: 200 })).json();
    expect(findings.total).toBe(done.stats.findings_created);
    const backup = findings.items.find((f: { rule_id: string }) => f.rule_id === 'aws-rds-instance-backup-enabled');
    expect(backup).toBeDefined();
    const patch = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(backup.id)}/terraform-patch`, expect: 200 })).json();
    expect(patch).toMatchObject({ path: 'main.tf', strategy: 'source' });
    expect(patch.patch).toMatch(/backup_retention_period/);

    // Events: started, then completed with the spec's data shape.
    const startedEvents = (await events(t, tenant.id, 'job.started')).filter((e) => (e.data as { job: { id: string } }).job.id === job.id);
    expect(startedEvents).toHaveLength(1);
    const completed = (await events(t, tenant.id, 'job.completed')).find((e) => (e.data as { job: { id: string } }).job.id === job.id)!;
    const data = completed.data as { job: Record<string, unknown> };
    expect(data.job).toMatchObject({ id: job.id, name: 'shop terraform', plugins: ['terraform-state'], status: 'completed', stats: done.stats });
    expect(Object.keys(data.job.stats as object).sort()).toEqual(['duration_seconds', 'findings_created', 'findings_resolved', 'nodes_discovered', 'nodes_updated']);
    for (const v of Object.values(data.job.stats as Record<string, unknown>)) expect(Number.isInteger(v)).toBe(true);
    expect(new Date(data.job.started_at as string).toISOString()).toBe(done.started_at);
    expect(new Date(data.job.completed_at as string).toISOString()).toBe(done.completed_at);
  });

  it('updates on a second run and resolves findings when the state changes', async () => {
    const again = await create(tenant.admin, { ...tfJob(), start: true });
    expect(again.status).toBe('queued');
    t.clock.advance(5_000);
    await t.drain();
    const second = await get(again);
    expect(second.stats).toMatchObject({ nodes_discovered: MAPPED, nodes_updated: MAPPED, findings_created: 0, findings_resolved: 0 });

    // Backups switched on and the instance removed from the state.
    const changed = structuredClone(STATE);
    changed.resources = changed.resources.filter((r) => r.type !== 'aws_instance');
    changed.resources.find((r) => r.type === 'aws_db_instance')!.instances[0]!.attributes.backup_retention_period = 7;
    const third = await create(tenant.admin, { ...tfJob({}, JSON.stringify(changed)), start: true });
    await t.drain();
    const done = await get(third);
    expect(done.stats.nodes_discovered).toBe(MAPPED - 1);
    expect(done.stats.findings_resolved).toBeGreaterThanOrEqual(1);
    const backup = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/findings?rule_id=aws-rds-instance-backup-enabled`, expect: 200 })).json();
    expect(backup.total).toBe(0);
  });

  it('reads a state referenced in S3, and fails at once (job.failed) when the object is missing', async () => {
    replay.objects.set('shop-tfstate/env/prod.tfstate', Buffer.from(JSON.stringify(STATE)));
    const job = await create(tenant.admin, {
      name: 'from s3',
      plugins: ['terraform-state'],
      config: { 'terraform-state': { state_uri: 's3://shop-tfstate/env/prod.tfstate' } },
      start: true,
    });
    expect(job.config['terraform-state']).toMatchObject({ source: 's3', state_uri: 's3://shop-tfstate/env/prod.tfstate', files: [] });
    await t.drain();
    expect(await get(job)).toMatchObject({ status: 'completed', stats: { nodes_discovered: MAPPED } });
    expect(replay.requests).toContain('GET /shop-tfstate/env/prod.tfstate?x-id=GetObject');

    const missing = await create(tenant.admin, {
      name: 'missing',
      plugins: ['terraform-state'],
      config: { 'terraform-state': { state_uri: 's3://shop-tfstate/env/nope.tfstate' } },
      start: true,
    });
    await t.drain();
    const failed = await get(missing);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, stats: null });
    expect(failed.error).toBe('cannot read the state s3://shop-tfstate/env/nope.tfstate: NoSuchKey (The specified key does not exist.)');
    expect(failed.completed_at).not.toBeNull();
    const event = (await events(t, tenant.id, 'job.failed')).find((e) => (e.data as { job: { id: string } }).job.id === missing.id)!;
    expect((event.data as { job: Record<string, unknown> }).job).toMatchObject({ status: 'failed', error: failed.error, plugins: ['terraform-state'] });
  });

  it('refuses bad input with 400 and an oversized upload with 413', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'x', plugins: ['azure'] }, /plugins/],
      [{ name: 'x', plugins: [] }, /plugins/],
      [{ name: 'x', plugins: ['aws', 'aws'] }, /plugins/],
      [{ name: '', plugins: ['aws'] }, /name/],
      [{ plugins: ['aws'] }, /name/],
      [{ name: 'x', plugins: ['aws'], extra: true }, /extra/],
      [{ name: 'x', plugins: ['aws'], config: { 'terraform-state': { state_uri: 's3://b-b/k' } } }, /config for "terraform-state", which is not among the job's plugins/],
      [{ name: 'x', plugins: ['terraform-state'] }, /needs exactly one of/],
      [{ name: 'x', plugins: ['terraform-state'], config: { 'terraform-state': { state: STATE, state_uri: 's3://b-b/k' } } }, /needs exactly one of/],
      [{ name: 'x', plugins: ['terraform-state'], config: { 'terraform-state': { state: '{not json' } } }, /state is not JSON/],
      [
        { name: 'x', plugins: ['terraform-state'], config: { 'terraform-state': { state: { version: 3, resources: [] } } } },
        /unsupported Terraform state format version 3: only version 4 is read/,
      ],
      [{ name: 'x', plugins: ['terraform-state'], config: { 'terraform-state': { state: { version: 4 } } } }, /no resources array/],
      [{ name: 'x', plugins: ['terraform-state'], config: { 'terraform-state': { state: [] } } }, /./],
      [{ name: 'x', plugins: ['terraform-state'], config: { 'terraform-state': { state_uri: 'https://example.com/state' } } }, /state_uri/],
      [{ name: 'x', plugins: ['aws'], config: { aws: { regions: ['moon-1'] } } }, /regions/],
      [{ name: 'x', plugins: ['aws'], config: { aws: { services: ['ec2', 'dynamo'] } } }, /services/],
      [{ name: 'x', plugins: ['aws'], config: { aws: { secret_access_key: 'x' } } }, /secret_access_key/],
    ];
    for (const [payload, message] of cases) {
      const res = await call(t.app, tenant.admin.token, { method: 'POST', url: jobsUrl(tenant.id), payload });
      expect(res.statusCode, JSON.stringify(payload).slice(0, 120)).toBe(400);
      expect(res.json().error.code).toBe('BAD_REQUEST');
      expect(res.json().error.message).toMatch(message);
    }
    const huge = { version: 4, resources: [{ mode: 'managed', type: 'aws_vpc', name: 'x', instances: [{ attributes: { id: 'vpc-1', blob: 'x'.repeat(300 * 1024) } }] }] };
    const res = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: jobsUrl(tenant.id),
      payload: { name: 'big', plugins: ['terraform-state'], config: { 'terraform-state': { state: huge } } },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('aws plugin (recorded SDK responses)', () => {
  it('reads EC2, ELB, RDS, Lambda, CloudTrail, KMS, CloudWatch, IAM, S3 and S3 Control through the real SDK clients (recordings over loopback HTTP) into the graph', async () => {
    const served = replay.calls.length;
    const job = await create(tenant.admin, { name: 'demo account', plugins: ['aws'], config: { aws: { regions: ['us-east-1'] } }, start: true });
    await t.drain();
    const done = await get(job);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    // The recording gives two roles one RoleId: both are kept, the second under its ARN, and said so.
    expect(done.warnings).toEqual([
      // The data set records the trail, not its status or event selectors (content/demo/README.md): left absent, said so.
      'aws: cloudtrail GetTrailStatus trail cloudtrail: NotImplemented',
      'aws: cloudtrail GetEventSelectors trail cloudtrail: NotImplemented',
      'aws: aws.iam.role AROAIBATWWYQXZTTALNCE is the id of both arn:aws:iam::123456789012:role/bad_role and arn:aws:iam::123456789012:role/service-role/level1; the second is kept under its ARN',
    ]);
    const counts = done.details.plugins.aws;
    expect(counts).toMatchObject({
      'aws.ec2.vpc': 1,
      'aws.ec2.subnet': 4,
      'aws.ec2.security_group': 8,
      'aws.ec2.instance': 3,
      'aws.elasticloadbalancingv2.load_balancer': 1,
      'aws.elasticloadbalancing.load_balancer': 1,
      // Both pages of DescribeDBInstances: RDS links them by Marker alone (no IsTruncated).
      'aws.rds.db_instance': 2,
      'aws.lambda.function': 1,
      'aws.s3.bucket': 1,
      'aws.iam.role': 4,
      // USER and USER_WITH_BAD_INLINE_POLICY, the root user and auditor_tmp from the credential report.
      'aws.iam.user': 4,
      'aws.cloudtrail.trail': 1,
      // The account has no S3 Block Public Access settings (S3 Control's NoSuchPublicAccessBlockConfiguration).
      'aws.s3.account_public_access_block': 1,
      // No IAM password policy either (NoSuchEntity): the node has an empty configuration.
      'aws.iam.account_password_policy': 1,
    });
    expect(done.stats.nodes_discovered).toBe(counts.resources);
    expect(done.stats.findings_created).toBeGreaterThan(0);
    // Every service went over HTTP through its client package, each list call to its last page.
    expect(replay.calls.slice(served)).toEqual([
      'ec2 DescribeVpcs',
      'ec2 DescribeSubnets',
      'ec2 DescribeSecurityGroups',
      'ec2 DescribeSecurityGroups NextToken=replay-page-2',
      'ec2 DescribeInstances',
      'ec2 DescribeNetworkInterfaces',
      'ec2 DescribeNetworkAcls',
      'ec2 DescribeTransitGateways',
      'ec2 DescribeVpnConnections',
      'ec2 DescribeClientVpnEndpoints',
      'ec2 DescribeVolumes',
      'ec2 DescribeLaunchTemplates',
      'elbv2 DescribeLoadBalancers',
      'elbv2 DescribeListeners',
      'elb DescribeLoadBalancers',
      'rds DescribeDBInstances',
      'rds DescribeDBInstances Marker=replay-page-2',
      'rds DescribeDBClusters',
      'rds DescribeDBSnapshots',
      'rds DescribeDBClusterSnapshots',
      'lambda ListFunctions',
      'cloudtrail DescribeTrails',
      'cloudtrail GetTrailStatus',
      'cloudtrail GetEventSelectors',
      'kms ListKeys',
      'cloudwatch DescribeAlarms',
      'iam GenerateCredentialReport',
      'iam GetCredentialReport',
      'iam GetAccountAuthorizationDetails',
      // The data set has no password policy: IAM's NoSuchEntity (content/demo/README.md).
      'iam GetAccountPasswordPolicy',
      's3control ListAccessPoints',
      's3control GetPublicAccessBlock',
    ]);
    expect(replay.requests).toEqual(
      expect.arrayContaining([
        'GET /?x-id=ListBuckets',
        'GET /cloudmapper_demo/?location=',
        'GET /cloudmapper_demo/?acl=',
        'GET /cloudmapper_demo/?policy=',
        'GET /2015-03-31/functions',
      ]),
    );
    const bucket = (
      await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/nodes/${encodeURIComponent('aws:us-east-1:aws.s3.bucket:cloudmapper_demo')}`, expect: 200 })
    ).json();
    expect(bucket.properties.supplementaryConfiguration.BucketPolicy.policyText).toContain('PublicReadGetObject');
    expect(bucket.properties.supplementaryConfiguration.ServerSideEncryptionConfiguration).toBeUndefined();
    const instance = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/nodes?types=aws.ec2.instance&region=us-east-1`, expect: 200 })).json();
    expect(instance.total).toBe(3);
    expect(instance.items[0].account_id).toBe('123456789012');
    expect(instance.items[0].properties.configuration.subnetId).toMatch(/^subnet-/);
    expect([...replay.unmodelled]).toEqual([]);
    // What the XML deserializers gave back: timestamps, numbers, booleans and nested lists.
    const dbs = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/nodes?types=aws.rds.db_instance`, expect: 200 })).json();
    const reporting = dbs.items.find((n: { name: string }) => n.name === 'reporting');
    expect(reporting.properties.configuration).toMatchObject({
      engine: 'mysql',
      allocatedStorage: 20,
      storageEncrypted: false,
      vpcSecurityGroups: [{ vpcSecurityGroupId: 'sg-00000005', status: 'active' }],
    });
    const roles = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/nodes?types=aws.iam.role&per_page=10`, expect: 200 })).json();
    const demoRoles = (roles.items as Array<{ id: string; name: string }>).filter((n) => ['bad_role', 'exfiller', 'level1', 'level3'].includes(n.name));
    expect(demoRoles.map((n) => n.id).sort()).toEqual([
      'aws:global:aws.iam.role:AROAIBATWWYQXZTTALNCE',
      'aws:global:aws.iam.role:AROAJIWYG5SMZL45EWWGG',
      'aws:global:aws.iam.role:AROAJQMBDNUMIKLZKMF64',
      'aws:global:aws.iam.role:arn:aws:iam::123456789012:role/service-role/level1',
    ]);
    const exfiller = roles.items.find((n: { name: string }) => n.name === 'exfiller');
    // IAM sends policy documents URL-encoded; the configuration keeps them so, as AWS Config does.
    expect(JSON.parse(decodeURIComponent(exfiller.properties.configuration.assumeRolePolicyDocument))).toMatchObject({ Statement: [{ Action: 'sts:AssumeRole' }] });
    // The credential report, typed, on the user it names (by name regardless of case: "user" is USER),
    // and on a node of its own for the root user; a user it does not list has none.
    const users = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/nodes?types=aws.iam.user&per_page=10`, expect: 200 })).json();
    const byName = new Map((users.items as Array<{ name: string; properties: Record<string, any> }>).map((n) => [n.name, n]));
    expect(byName.get('USER')!.properties.supplementaryConfiguration.CredentialReport).toEqual({
      generatedTime: '2019-05-07T15:40:22.000Z',
      user: 'user',
      arn: 'arn:aws:iam::123456789012:user/user',
      userCreationTime: '2018-05-07T15:35:54.000Z',
      passwordEnabled: true,
      passwordLastUsed: '2018-05-07T15:35:54.000Z',
      passwordLastChanged: null,
      mfaActive: false,
      accessKeys: [
        { slot: 1, active: true, lastRotated: '2019-05-07T15:35:55.000Z', lastUsedDate: null, lastUsedRegion: null, lastUsedService: null },
        { slot: 2, active: true, lastRotated: '2018-05-07T15:35:54.000Z', lastUsedDate: '2018-05-07T15:35:54.000Z', lastUsedRegion: 'us-east-1', lastUsedService: 's3' },
      ],
    });
    expect(byName.get('USER_WITH_BAD_INLINE_POLICY')!.properties.supplementaryConfiguration.CredentialReport).toBeUndefined();
    const root = byName.get('<root_account>')!;
    expect(root).toMatchObject({
      id: 'aws:global:aws.iam.user:123456789012',
      account_id: '123456789012',
      properties: { arn: 'arn:aws:iam::123456789012:root', configuration: { attachedManagedPolicies: [], userPolicyList: [] } },
    });
    expect(root.properties.supplementaryConfiguration.CredentialReport).toMatchObject({
      passwordEnabled: null,
      mfaActive: true,
      passwordLastUsed: '2019-03-03T16:58:16.000Z',
      accessKeys: [{ slot: 1, active: true, lastUsedService: 'ecr' }],
    });
    expect(byName.get('auditor_tmp')!.properties.supplementaryConfiguration.CredentialReport.accessKeys).toEqual([
      { slot: 1, active: true, lastRotated: '2019-05-07T15:35:55.000Z', lastUsedDate: null, lastUsedRegion: null, lastUsedService: null },
    ]);
  });

  it("gives the recordings back unchanged through each client's deserializer", async () => {
    type Any = Record<string, any>;
    // Timestamps come back as Dates, IAM's policy documents URL-encoded (as the API sends them).
    const normal = (v: unknown): unknown => {
      if (v instanceof Date) return v.toISOString();
      if (typeof v === 'string' && /^\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:?\d\d)$/.test(v)) return new Date(v).toISOString();
      if (typeof v === 'string' && v.startsWith('%7B')) return JSON.parse(decodeURIComponent(v));
      if (Array.isArray(v)) return v.map(normal);
      if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normal(x)]));
      return v;
    };
    const merge = (into: Any, page: Any) => {
      for (const [k, v] of Object.entries(page)) into[k] = Array.isArray(v) ? [...(into[k] ?? []), ...v] : v;
      return into;
    };
    const cases: Array<[AwsService, string, string[]]> = [
      ['ec2', 'DescribeVpcs', ['ec2-describe-vpcs']],
      ['ec2', 'DescribeSubnets', ['ec2-describe-subnets']],
      ['ec2', 'DescribeSecurityGroups', ['ec2-describe-security-groups']],
      ['ec2', 'DescribeInstances', ['ec2-describe-instances']],
      ['ec2', 'DescribeNetworkInterfaces', ['ec2-describe-network-interfaces']],
      ['elbv2', 'DescribeLoadBalancers', ['elbv2-describe-load-balancers']],
      ['elb', 'DescribeLoadBalancers', ['elb-describe-load-balancers']],
      ['rds', 'DescribeDBInstances', ['rds-describe-db-instances', 'rds-describe-db-instances.page-2']],
      ['lambda', 'ListFunctions', ['lambda-list-functions']],
      ['iam', 'GetAccountAuthorizationDetails', ['iam-get-account-authorization-details']],
      ['cloudtrail', 'DescribeTrails', ['cloudtrail-describe-trails']],
    ];
    for (const [service, action, files] of cases) {
      const spec = AWS_SERVICES[service];
      const mod = (await spec.load()) as Any;
      const client = new mod[spec.client]({ region: 'us-east-1' });
      const read: Any = {};
      let input: Any = {};
      for (let page = 0; page < 5; page++) {
        const { $metadata, NextToken, NextMarker, Marker, IsTruncated, ...out } = await client.send(new mod[`${action}Command`](input));
        expect($metadata.httpStatusCode).toBe(200);
        merge(read, out);
        const next = NextToken ? { NextToken } : NextMarker ? { Marker: NextMarker } : Marker && IsTruncated !== false ? { Marker } : null;
        if (!next) break;
        input = next;
      }
      client.destroy();
      expect(normal(read), `${service} ${action}`).toEqual(normal(files.map(recorded).reduce(merge, {})));
    }
  });

  it('reads only the services asked for', async () => {
    const served = replay.calls.length;
    const job = await create(tenant.admin, { name: 'ec2 and s3', plugins: ['aws'], config: { aws: { services: ['ec2', 's3'] } }, start: true });
    await t.drain();
    const done = await get(job);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.warnings).toEqual([]);
    expect(done.details.plugins.aws).toMatchObject({ 'aws.ec2.instance': 3, 'aws.s3.bucket': 1 });
    expect(done.details.plugins.aws['aws.rds.db_instance']).toBeUndefined();
    expect(new Set(replay.calls.slice(served).map((c) => c.split(' ')[0]))).toEqual(new Set(['ec2']));
  });

  it('fails with a clear error, before any call, when a client package is missing', async () => {
    const served = replay.requests.length;
    const loadSdk = async (pkg: string) => (pkg === '@aws-sdk/client-rds' ? null : ((await import(pkg)) as Record<string, unknown>));
    await expect(awsInventory({ services: ['ec2', 'rds'] }, { loadSdk })).rejects.toThrow(
      'aws: cannot read rds: @aws-sdk/client-rds is not installed; it is a dependency of this service: reinstall the dependencies (npm ci)',
    );
    expect(replay.requests.length).toBe(served);
  });
});

describe('start and cancel', () => {
  const minimal = {
    version: 4,
    resources: [{ mode: 'managed', type: 'aws_vpc', name: 'x', instances: [{ attributes: { id: 'vpc-cancel', arn: 'arn:aws:ec2:eu-west-1:210987654321:vpc/vpc-cancel' } }] }],
  };
  const job = () => create(tenant.admin, { name: 'cancel me', plugins: ['terraform-state'], config: { 'terraform-state': { state: minimal } } });
  const post = (j: { status_url: string }, action: string) => call(t.app, tenant.admin.token, { method: 'POST', url: `${j.status_url}/${action}` });

  it('cancels a pending job (job.cancelled) and answers 409 to starting or cancelling it again', async () => {
    const pending = await job();
    const cancelled = await post(pending, 'cancel');
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: 'cancelled', config: { 'terraform-state': { state_kept: false } } });
    expect(cancelled.json().completed_at).not.toBeNull();
    const event = (await events(t, tenant.id, 'job.cancelled')).find((e) => (e.data as { job: { id: string } }).job.id === pending.id);
    expect(event).toBeDefined();
    for (const action of ['start', 'cancel']) {
      const res = await post(pending, action);
      expect(res.statusCode).toBe(409);
      expect(res.json().error.message).toMatch(/^job is cancelled; /);
    }
    const audit = await t.deps.database.db.selectFrom('audit_logs').select('action').where('target_id', '=', pending.id).orderBy('created_at').execute();
    expect(audit.map((a) => a.action)).toEqual(['discovery_job.created', 'discovery_job.cancelled']);
  });

  it('cancels a queued job: it never runs', async () => {
    const queued = await job();
    expect((await post(queued, 'start')).statusCode).toBe(202);
    expect((await post(queued, 'start')).json().error.message).toBe('job is queued; only a pending job can be started');
    expect((await post(queued, 'cancel')).json().status).toBe('cancelled');
    const queueRow = await t.deps.database.db.selectFrom('jobs').select('status').where('id', '=', queued.id).executeTakeFirstOrThrow();
    expect(queueRow.status).toBe('cancelled');
    expect(await t.drain()).toBe(0);
    expect((await get(queued)).status).toBe('cancelled');
  });

  it('cancels a running job; its worker finds it cancelled and leaves it so', async () => {
    const running = await job();
    await post(running, 'start');
    // A worker holding it (claimed, its row running), as the worker's claim and the job's first step leave it.
    const db = t.deps.database.db;
    await sql`UPDATE jobs SET status = 'running', attempts = 1, lease_token = gen_random_uuid(), lease_owner = 'other-worker',
      lease_expires_at = ${t.clock.now()}::timestamptz + interval '2 minutes' WHERE id = ${running.id} AND kind = ${DISCOVERY_JOB}`.execute(db);
    await db.updateTable('discovery_jobs').set({ status: 'running', started_at: t.clock.now(), attempts: 1 }).where('id', '=', running.id).execute();
    expect((await get(running)).status).toBe('running');
    const res = await post(running, 'cancel');
    expect(res.json()).toMatchObject({ status: 'cancelled' });
    t.clock.advance(5 * 60_000);
    await t.drain();
    expect((await get(running, await fresh(t, tenant.admin))).status).toBe('cancelled');
    expect((await get(running, await fresh(t, tenant.admin))).stats).toBeNull();
  });
});

describe('listing and access', () => {
  it('pages, filters by status and older_than, and refuses bad filters with 400', async () => {
    const session = await fresh(t, tenant.admin);
    const all = (await call(t.app, session.token, { url: jobsUrl(tenant.id), expect: 200 })).json();
    expect(all).toMatchObject({ page: 1, per_page: 50 });
    expect(all.total).toBeGreaterThanOrEqual(8);
    const created = all.items.map((i: { created_at: string }) => i.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    const page2 = (await call(t.app, session.token, { url: `${jobsUrl(tenant.id)}?per_page=2&page=2`, expect: 200 })).json();
    expect(page2.items.map((i: { id: string }) => i.id)).toEqual(all.items.slice(2, 4).map((i: { id: string }) => i.id));
    expect(page2.total_pages).toBe(Math.ceil(all.total / 2));

    const cancelled = (await call(t.app, session.token, { url: `${jobsUrl(tenant.id)}?status=cancelled`, expect: 200 })).json();
    expect(cancelled.total).toBe(3);
    expect(cancelled.items.every((i: { status: string }) => i.status === 'cancelled')).toBe(true);
    const two = (await call(t.app, session.token, { url: `${jobsUrl(tenant.id)}?status=failed,cancelled`, expect: 200 })).json();
    expect(two.total).toBe(4);

    // A job created now is not older than 1 minute; the earlier ones (the clock moved 5 minutes) are.
    const fresh1 = await create(session, { name: 'new', plugins: ['aws'] });
    const older = (await call(t.app, session.token, { url: `${jobsUrl(tenant.id)}?older_than=1m`, expect: 200 })).json();
    expect(older.items.map((i: { id: string }) => i.id)).not.toContain(fresh1.id);
    expect(older.total).toBe(all.total);
    const pendingOld = (await call(t.app, session.token, { url: `${jobsUrl(tenant.id)}?status=pending&older_than=1s`, expect: 200 })).json();
    expect(pendingOld.total).toBe(0);
    t.clock.advance(2_000);
    const pendingNow = (await call(t.app, (await fresh(t, tenant.admin)).token, { url: `${jobsUrl(tenant.id)}?status=pending&older_than=1s`, expect: 200 })).json();
    expect(pendingNow.items.map((i: { id: string }) => i.id)).toEqual([fresh1.id]);

    const bad: Array<[string, RegExp]> = [
      ['status=done', /status must be one or more of pending, queued, running, completed, failed, cancelled/],
      ['status=', /status must be/],
      ['older_than=yesterday', /older_than must be a duration like 30s, 5m, 1h or 7d/],
      ['older_than=-1h', /older_than/],
      ['per_page=0', /per_page/],
      ['per_page=501', /per_page/],
      ['page=0', /page/],
      ['sort=name', /sort/],
    ];
    const token = (await fresh(t, tenant.admin)).token;
    for (const [query, message] of bad) {
      const res = await call(t.app, token, { url: `${jobsUrl(tenant.id)}?${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.message, query).toMatch(message);
    }
  });

  it('needs jobs:read to look and jobs:write to act; another tenant or workspace sees 404', async () => {
    const admin = await fresh(t, tenant.admin);
    const job = await create(admin, { name: 'access', plugins: ['aws'] });
    const reader = await fresh(t, tenant.users['read-only']);
    expect((await call(t.app, reader.token, { url: job.status_url })).statusCode).toBe(200);
    expect((await call(t.app, reader.token, { url: jobsUrl(tenant.id) })).statusCode).toBe(200);
    for (const request of [
      { method: 'POST' as const, url: jobsUrl(tenant.id), payload: { name: 'no', plugins: ['aws'] } },
      { method: 'POST' as const, url: `${job.status_url}/start` },
      { method: 'POST' as const, url: `${job.status_url}/cancel` },
    ]) {
      const res = await call(t.app, reader.token, request);
      expect(res.statusCode, request.url).toBe(403);
      expect(res.json().error.message).toBe('missing permission jobs:write');
    }
    expect((await call(t.app, null, { url: jobsUrl(tenant.id) })).statusCode).toBe(401);
    // API keys: jobs:read reads, jobs:write acts.
    const readKey = await createApiKey(t, { ...tenant, admin }, { permissions: ['jobs:read'] });
    expect((await call(t.app, readKey.key, { url: job.status_url })).statusCode).toBe(200);
    expect((await call(t.app, readKey.key, { method: 'POST', url: `${job.status_url}/start` })).statusCode).toBe(403);
    const writeKey = await createApiKey(t, { ...tenant, admin }, { permissions: ['jobs:read', 'jobs:write'] });
    expect((await call(t.app, writeKey.key, { method: 'POST', url: `${job.status_url}/cancel` })).statusCode).toBe(200);

    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const path of [`/${unknown}`, `/${job.id}`]) {
      const res = await call(t.app, other.admin.token, { url: jobsUrl(other.id, path) });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.message).toBe('job not found');
    }
    for (const action of ['start', 'cancel']) {
      expect((await call(t.app, other.admin.token, { method: 'POST', url: jobsUrl(other.id, `/${job.id}/${action}`) })).statusCode).toBe(404);
    }
    expect((await call(t.app, other.admin.token, { url: jobsUrl(other.id) })).json().total).toBe(0);
    const ws = (await call(t.app, admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'jobs-second' }, expect: 201 })).json();
    const switched = (await call(t.app, admin.token, { method: 'POST', url: '/api/v1/auth/switch-workspace', payload: { workspace_id: ws.id }, expect: 200 })).json();
    expect((await call(t.app, switched.token, { url: job.status_url })).statusCode).toBe(404);
    expect((await call(t.app, switched.token, { url: jobsUrl(tenant.id) })).json().total).toBe(0);
    expect((await call(t.app, admin.token, { url: jobsUrl(tenant.id, '/not-a-uuid') })).statusCode).toBe(400);
  });
});
