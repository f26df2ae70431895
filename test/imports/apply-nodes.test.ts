import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { audit } from '../harness/compliance.js';
import { projectPath } from '../../src/platform/paths.js';
import { awsConfigParser } from '../../src/modules/discovery/imports/aws-config.js';
import { applyImportedEdges, applyImportedNodes } from '../../src/modules/discovery/imports/apply-nodes.js';
import type { ImportedNode } from '../../src/modules/discovery/imports/import-record.js';

/**
 * AWS Config items written into a workspace's graph (applyImportedNodes), read back through the
 * API, re-applied (only what changed is reported) and audited by our rules (issue 27).
 */

const DIR = projectPath('test', 'fixtures', 'imports', 'aws-config');
const RDK = ['AWS_EC2_Instance', 'AWS_EC2_SecurityGroup', 'AWS_IAM_User', 'AWS_RDS_DBInstance', 'AWS_S3_Bucket', 'AWS_Cloudtrail_Trail'].map((t) => `rdk-example_ci-${t}.json`);
const SELECT = 'c7n-test_rdscluster_kms_alias.SelectResourceConfig.json';

async function nodesOf(...files: string[]): Promise<ImportedNode[]> {
  const out: ImportedNode[] = [];
  for (const file of files) {
    for await (const item of awsConfigParser.parse(Readable.from([readFileSync(`${DIR}/${file}`)]))) if (item.kind === 'node') out.push(item);
  }
  return out;
}

const SG = 'aws:us-east-1:aws.ec2.security_group:sg-1d56fc66';
const BUCKET = 'aws:us-east-1:aws.s3.bucket:mborch-test-bucket-config-item';
const INSTANCE = 'aws:us-east-1:aws.ec2.instance:i-03402838daac1d611';
const CLUSTER = 'aws:us-east-2:aws.rds.db_cluster:cluster-H6LU56TOHIKJLGS5GVL52DBOOE';

let t: TestApp;
let tenant: TenantFixture;
const scope = () => ({ tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId });
const db = () => t.deps.database.db;
const getNode = async (id: string, expect = 200) => call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/nodes/${encodeURIComponent(id)}`, expect });

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(async () => {
  await t.close();
});

describe('applyImportedNodes', () => {
  it('writes AWS Config items as nodes of their types with their properties, and the edges between known nodes', async () => {
    const nodes = await nodesOf(...RDK, SELECT);
    const applied = await applyImportedNodes(db(), scope(), nodes, new Date());
    expect(applied.upserted).toBe(8);
    expect([...applied.changedNodeIds].sort()).toEqual(nodes.map((n) => n.node.id).sort());

    const sg = (await getNode(SG)).json();
    expect(sg).toMatchObject({
      provider: 'aws',
      type: 'aws.ec2.security_group',
      region: 'us-east-1',
      native_id: 'sg-1d56fc66',
      account_id: '264683526309',
      source: { kind: 'aws-config' },
    });
    expect(sg.properties).toMatchObject({ resourceType: 'AWS::EC2::SecurityGroup', configuration: { groupName: 'launch-wizard-7', vpcId: 'vpc-0990dc6d' } });
    const cluster = (await getNode(CLUSTER)).json();
    expect(cluster).toMatchObject({ type: 'aws.rds.db_cluster', region: 'us-east-2', account_id: '644160558196' });
    expect(cluster.properties.configuration).toMatchObject({ engine: 'aurora-mysql', storageEncrypted: true });
    expect((await getNode(BUCKET)).json().properties.supplementaryConfiguration.BucketVersioningConfiguration.status).toBe('Enabled');

    // The instance's relationships name resources the file does not hold (its VPC, subnet, …): those
    // edges wait for their targets, as discovery keeps only edges between nodes it knows.
    expect(applied.edgesWritten).toBe(0);
    expect(applied.pendingEdges).toContainEqual({ source: INSTANCE, target: 'aws:us-east-1:aws.ec2.security_group:sg-fd215482', type: 'uses_security_group', properties: {} });
  });

  it('writes a pending edge once its target is a node, and drops the rest', async () => {
    const [instance] = await nodesOf('rdk-example_ci-AWS_EC2_Instance.json');
    const sg = structuredClone((await nodesOf('rdk-example_ci-AWS_EC2_SecurityGroup.json'))[0]!);
    Object.assign(sg.node, { id: 'aws:us-east-1:aws.ec2.security_group:sg-fd215482', native_id: 'sg-fd215482' });
    const first = await applyImportedNodes(db(), scope(), [instance!], new Date());
    await applyImportedNodes(db(), scope(), [sg], new Date());
    const edges = await applyImportedEdges(db(), scope(), first.pendingEdges, new Date());
    expect(edges.written).toBe(1);
    expect(edges.pending.map((e) => e.type).sort()).toEqual(['attached_to', 'contains', 'in_subnet', 'in_vpc']);
    const listed = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/edges?source=${encodeURIComponent(INSTANCE)}`, expect: 200 });
    expect(listed.json().items).toEqual([expect.objectContaining({ target: sg.node.id, type: 'uses_security_group' })]);
  });

  it('reports nothing changed when the same items are applied again, and the one item that changed', async () => {
    const nodes = await nodesOf(...RDK, SELECT);
    expect((await applyImportedNodes(db(), scope(), nodes, new Date())).changedNodeIds).toEqual([]);
    const changed = nodes.map((n) => (n.node.id === BUCKET ? { ...n, node: { ...n.node, tags: { team: 'data' } } } : n));
    const again = await applyImportedNodes(db(), scope(), changed, new Date());
    expect(again).toMatchObject({ upserted: 8, changedNodeIds: [BUCKET] });
  });

  it('keeps the source another writer gave a node', async () => {
    const [bucket] = await nodesOf('rdk-example_ci-AWS_S3_Bucket.json');
    await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/nodes`,
      payload: { ...bucket!.node, source: { kind: 'terraform', address: 'aws_s3_bucket.logs' } },
      expect: 201,
    });
    await applyImportedNodes(db(), scope(), [bucket!], new Date());
    expect((await getNode(BUCKET)).json().source).toEqual({ kind: 'terraform', address: 'aws_s3_bucket.logs' });
  });

  it('lets our rules evaluate the imported resources', async () => {
    await audit(t, tenant.admin.token, tenant.id);
    const findings = async (resource: string) =>
      (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/findings?per_page=100&resource_id=${encodeURIComponent(resource)}`, expect: 200 }))
        .json()
        .items.map((f: { rule_id: string }) => f.rule_id);
    // The security group admits 0.0.0.0/0 on port 22; the bucket writes no access logs (destinationBucketName null).
    expect(await findings(SG)).toContain('aws-ec2-sg-no-ssh-from-internet');
    expect(await findings(BUCKET)).toContain('aws-s3-bucket-access-logging');
  });
});
