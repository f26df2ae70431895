import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { projectPath } from '../../src/platform/paths.js';
import { startAwsReplay, useAwsReplay, type AwsReplay } from './aws-recorded.js';

/**
 * The aws plugin maps every type a built-in rule reads onto the AWS Config property model as the
 * rules read it. CloudMapper's demo account has none of most of them (content/demo/README.md), so
 * this test adds one resource of each, written for it (test/fixtures/aws-recorded/every-type/, each
 * built to violate its rules), served through the real clients by the replay, and checks over HTTP
 * that a discovery job and an audit fire those rules on them.
 */
const GRANTED = 'aws-every-type';
let t: TestApp;
let tenant: TenantFixture;
let replay: AwsReplay;
let restoreEnv: () => void;
let done: Record<string, any>;
let findings: Array<{ rule_id: string; resource_name: string }>;
const rulesOn = (name: string) =>
  findings
    .filter((f) => f.resource_name === name)
    .map((f) => f.rule_id)
    .sort();
const node = async (id: string) => (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/nodes/${encodeURIComponent(id)}`, expect: 200 })).json();

beforeAll(async () => {
  t = await createTestApp({ env: { CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS: GRANTED } });
  replay = await startAwsReplay({ overlay: projectPath('test', 'fixtures', 'aws-recorded', 'every-type') });
  restoreEnv = useAwsReplay(replay.endpoint);
  tenant = await buildTenant(t, { name: GRANTED });
  const job = (
    await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/jobs`,
      payload: { name: 'every type', plugins: ['aws'], config: { aws: { regions: ['us-east-1'] } }, start: true },
      expect: 201,
    })
  ).json();
  await t.drain();
  done = (await call(t.app, tenant.admin.token, { url: job.status_url, expect: 200 })).json();
  expect(done.status, JSON.stringify(done.error)).toBe('completed');
  await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/findings/run`, payload: {}, expect: 202 });
  await t.drain();
  findings = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/findings?status=open&per_page=500`, expect: 200 })).json().items;
}, 300_000);

afterAll(async () => {
  restoreEnv?.();
  await replay?.close();
  await t?.close();
});

describe('aws plugin: every type the rules read', () => {
  it('reads one of each, with the per-resource calls, and sends back every recorded member', () => {
    expect(done.details.plugins.aws).toMatchObject({
      'aws.ec2.network_acl': 1,
      'aws.ec2.volume': 1,
      'aws.ec2.launch_template': 1,
      'aws.ec2.transit_gateway': 1,
      'aws.ec2.vpn_connection': 1,
      'aws.ec2.client_vpn_endpoint': 1,
      'aws.elasticloadbalancingv2.listener': 1,
      'aws.rds.db_cluster': 1,
      'aws.rds.db_snapshot': 1,
      'aws.rds.db_cluster_snapshot': 1,
      'aws.cloudwatch.alarm': 1,
      'aws.s3.access_point': 1,
      'aws.s3.account_public_access_block': 1,
    });
    expect(replay.calls).toEqual(
      expect.arrayContaining(['ec2 DescribeLaunchTemplateVersions', 'rds DescribeDBSnapshotAttributes', 'rds DescribeDBClusterSnapshotAttributes', 's3control GetAccessPoint']),
    );
    expect([...replay.unmodelled]).toEqual([]);
    expect(done.warnings.filter((w: string) => !w.includes('is the id of both'))).toEqual([]);
  });

  it('fires the rules each resource was written to violate', () => {
    expect(rulesOn('open-acl')).toEqual([
      'aws-vpc-nacl-in-use',
      'aws-vpc-nacl-no-ingress-all-ports-from-internet',
      'aws-vpc-nacl-no-rdp-from-internet',
      'aws-vpc-nacl-no-ssh-from-internet',
    ]);
    expect(rulesOn('vol-0test0unencrypted')).toEqual(['aws-ebs-volume-encrypted']);
    expect(rulesOn('public-web')).toEqual(['aws-ec2-launch-template-no-public-ip']);
    expect(rulesOn('tgw-0test0autoaccept')).toEqual(['aws-vpc-transit-gateway-no-auto-accept']);
    expect(rulesOn('vpn-0test0onetunneldown')).toEqual(['aws-vpc-vpn-tunnels-up']);
    expect(rulesOn('cvpn-endpoint-0test0nolog')).toEqual(['aws-vpc-client-vpn-connection-logging']);
    expect(rulesOn('demo:443')).toEqual(['aws-elbv2-listener-secure-tls-policy']);
    expect(rulesOn('orders')).toEqual(['aws-rds-cluster-iam-authentication', 'aws-rds-cluster-log-exports', 'aws-rds-cluster-multi-az', 'aws-rds-cluster-storage-encrypted']);
    expect(rulesOn('reporting-public')).toEqual(['aws-rds-snapshot-encrypted', 'aws-rds-snapshot-not-public']);
    expect(rulesOn('orders-public')).toEqual(['aws-rds-cluster-snapshot-encrypted', 'aws-rds-cluster-snapshot-not-public']);
    expect(rulesOn('root-login-no-action')).toEqual(['aws-cloudwatch-alarm-actions-configured']);
    expect(rulesOn('public-reads')).toEqual(['aws-s3-access-point-public-access-block']);
  });

  it("maps each response onto AWS Config's names, and keeps no VPN pre-shared key", async () => {
    const vpn = await node('aws:us-east-1:aws.ec2.vpn_connection:vpn-0test0onetunneldown');
    expect(vpn.properties.configuration).toMatchObject({ state: { value: 'available' }, vgwTelemetry: [{ status: 'UP' }, { status: 'DOWN' }] });
    expect(JSON.stringify(vpn.properties)).not.toMatch(/not-a-real-key|pre-shared/);
    const tgw = await node('aws:us-east-1:aws.ec2.transit_gateway:tgw-0test0autoaccept');
    expect(tgw.properties.configuration).toMatchObject({ Id: 'tgw-0test0autoaccept', AutoAcceptSharedAttachments: 'enable', AmazonSideAsn: 64512 });
    const cluster = await node('aws:us-east-1:aws.rds.db_cluster:cluster-0TEST0ORDERS0000000000');
    expect(cluster.properties.configuration).toMatchObject({ iamdatabaseAuthenticationEnabled: false, multiAZ: false, storageEncrypted: false });
    const snapshot = await node('aws:us-east-1:aws.rds.db_snapshot:reporting-public');
    expect(snapshot.properties.supplementaryConfiguration).toEqual({ DBSnapshotAttributes: [{ attributeName: 'restore', attributeValues: ['all'] }] });
    const alarm = await node('aws:us-east-1:aws.cloudwatch.alarm:root-login-no-action');
    expect(alarm.properties.configuration).toMatchObject({ actionsEnabled: true, alarmActions: [], okactions: [] });
    expect(alarm.properties.configuration.oKActions).toBeUndefined();
    // A trail status CloudTrail answered is kept (the demo's own run, without it, leaves it absent).
    const trail = await node('aws:us-east-1:aws.cloudtrail.trail:cloudtrail');
    expect(trail.properties.supplementaryConfiguration).toMatchObject({
      TrailStatus: { isLogging: false, latestDeliveryError: 'NoSuchBucket', stopLoggingTime: '2019-05-02T09:00:00.000Z' },
      EventSelectors: [{ readWriteType: 'WriteOnly', includeManagementEvents: true }],
    });
    const ap = await node('aws:us-east-1:aws.s3.access_point:public-reads');
    expect(ap.properties.configuration).toMatchObject({
      Name: 'public-reads',
      Bucket: 'cloudmapper_demo',
      Arn: 'arn:aws:s3:us-east-1:123456789012:accesspoint/public-reads',
      PublicAccessBlockConfiguration: { BlockPublicAcls: false },
    });
  });
});
