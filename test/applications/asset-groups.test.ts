import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, type TenantFixture } from '../harness/identity.js';
import { awsNode, putNodes } from '../harness/graph.js';
import { nodeIdOf } from '../harness/compliance.js';
import { assetGroupNodeIds } from '../../src/modules/applications/index.js';
import { client, type Client } from './helpers.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let api: Client;

const n1 = awsNode('aws.ec2.instance', 'i-1', {
  name: 'web-frontend',
  tags: { env: 'prod', Team: 'Shop', 'aws:cloudformation:stack-name': 'shop-stack' },
  properties: { resourceType: 'AWS::EC2::Instance', configuration: { vpcId: 'vpc-a', subnetId: 'subnet-1', instanceType: 't3.micro' }, relationships: [] },
});
const n2 = awsNode('aws.rds.db_instance', 'db-1', {
  name: 'orders-DB',
  region: 'eu-west-1',
  tags: { env: 'staging' },
  properties: { configuration: { dBSubnetGroup: { vpcId: 'vpc-a' } }, relationships: [] },
});
const n3 = awsNode('aws.lambda.function', 'fn-1', {
  properties: { configuration: {}, relationships: [{ resourceType: 'AWS::EC2::VPC', resourceId: 'vpc-b', relationshipName: 'Is associated with Vpc' }] },
});
const n4 = awsNode('aws.s3.bucket', 'bucket-1', { tags: { env: 'prod', 'Cost Center': '42' } });
const n5 = { provider: 'gcp', region: 'us-west-2', type: 'gcp.compute.instance', native_id: 'vm-1', name: 'vm-1', properties: { vpc_id: 'net-x' }, tags: {} };
const [i1, i2, i3, i4, i5] = [n1, n2, n3, n4, n5].map(nodeIdOf) as [string, string, string, string, string];

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  api = client(t, tenant.id, tenant.users['security-analyst'].token);
  await putNodes(t, tenant.users['security-analyst'].token, tenant.id, [n1, n2, n3, n4, n5]);
  await putNodes(t, other.admin.token, other.id, [n1]);
});
afterAll(() => t.close());

async function preview(filter: string): Promise<string[]> {
  const res = await api.post('/asset-groups/preview', { filter, per_page: 500 });
  return (res.items as Array<{ id: string }>).map((i) => i.id).sort();
}

describe('the filter language against the nodes table', () => {
  it.each([
    ['vpc_id = vpc-a', [i1, i2]],
    ['vpc_id = vpc-b', [i3]],
    ['vpc_id = net-x', [i5]],
    ['subnet_id = subnet-1', [i1]],
    ['tags.env = prod', [i1, i4]],
    ['tags.env != prod', [i2, i3, i5]],
    ['NOT tags.env = prod', [i2, i3, i5]],
    ['name contains DB', [i2]],
    ['name contains fRoNt', [i1]],
    ['name = orders-DB', [i2]],
    ['name = "orders-db"', []],
    ['tags."Cost Center" = 42', [i4]],
    ['tags.aws:cloudformation:stack-name = shop-stack', [i1]],
    ['tags.Team = Shop', [i1]],
    ['tags.team = Shop', []],
    ['properties.configuration.instanceType = t3.micro', [i1]],
    ['properties.configuration.dBSubnetGroup.vpcId = vpc-a', [i2]],
    ['resource_type = "AWS::EC2::Instance"', [i1]],
    ['region in (eu-west-1, us-west-2)', [i2, i5]],
    ['tags.env exists AND NOT type = aws.s3.bucket', [i1, i2]],
    ['(tags.env = prod OR vpc_id = vpc-b) AND provider = aws', [i1, i3, i4]],
    ['tags.env = prod OR vpc_id = vpc-b AND provider = gcp', [i1, i4]],
    ['type contains aws.ec2 OR type = gcp.compute.instance', [i1, i5]],
    [`name = "x' OR '1'='1"`, []],
    [`tags."x'); DELETE FROM nodes; --" exists`, []],
  ])('%s', async (filter, expected) => {
    expect(await preview(filter)).toEqual([...expected].sort());
  });

  it('the nodes survive an injection attempt', async () => {
    expect(await preview('provider exists')).toHaveLength(5);
  });
});

describe('POST /asset-groups/preview', () => {
  it('pages the members it would have, by id, with the filter echoed', async () => {
    const res = await api.post('/asset-groups/preview', { filter: 'provider = aws', per_page: 2, page: 2 });
    expect(res).toMatchObject({ total: 4, page: 2, per_page: 2, total_pages: 2, filter: 'provider = aws' });
    expect(res.items.map((i: { id: string }) => i.id)).toEqual([i1, i2, i3, i4].sort().slice(2));
    expect(res.items[0]).toMatchObject({ name: expect.any(String), type: expect.any(String), region: expect.any(String) });
  });

  it('answers 400 with the position for a bad filter', async () => {
    const res = await api.post('/asset-groups/preview', { filter: 'vpc_id = vpc-a AND' }, 400);
    expect(res.error.details).toMatchObject({ field: 'filter', position: 18 });
    const empty = await api.post('/asset-groups/preview', { filter: '' }, 400);
    expect(empty.error.code).toBe('BAD_REQUEST');
  });

  it('is open to read-only users (nodes:read)', async () => {
    const res = await client(t, tenant.id, tenant.users['read-only'].token).post('/asset-groups/preview', { filter: 'tags.env = prod' });
    expect(res.total).toBe(2);
  });
});

describe('asset groups', () => {
  let id: string;

  it('are created, read and listed with their member count', async () => {
    const created = await api.post('/asset-groups', { name: 'Production', description: 'prod-tagged', filter: 'tags.env = prod' }, 201);
    id = created.id;
    expect(created).toMatchObject({ name: 'Production', description: 'prod-tagged', filter: 'tags.env = prod', member_count: 2 });
    expect(await api.get(`/asset-groups/${id}`)).toEqual(created);
    await api.post('/asset-groups', { name: 'VPC A', filter: 'vpc_id = vpc-a' }, 201);
    const list = await api.get('/asset-groups');
    expect(list.items.map((g: { name: string; member_count: number }) => [g.name, g.member_count])).toEqual([
      ['Production', 2],
      ['VPC A', 2],
    ]);
    expect((await api.get('/asset-groups?search=vpc')).total).toBe(1);
  });

  it('resolve their members now, paged', async () => {
    const page = await api.get(`/asset-groups/${id}/members?per_page=1`);
    expect(page).toMatchObject({ total: 2, per_page: 1, total_pages: 2 });
    expect(page.items[0].id).toBe([i1, i4].sort()[0]);
    await putNodes(t, tenant.users['security-analyst'].token, tenant.id, [{ ...n2, tags: { env: 'prod' } }]);
    expect((await api.get(`/asset-groups/${id}/members`)).items.map((m: { id: string }) => m.id).sort()).toEqual([i1, i2, i4].sort());
    const scope = { tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId };
    expect(await assetGroupNodeIds(t.deps.database.db, scope, id)).toEqual([i1, i2, i4].sort());
  });

  it('are changed with PATCH; a bad filter is 400 with its position and changes nothing', async () => {
    const res = await api.patch(`/asset-groups/${id}`, { filter: 'tags.env = prod AND (region = x' }, 400);
    expect(res.error.details.position).toBe(31);
    expect((await api.get(`/asset-groups/${id}`)).filter).toBe('tags.env = prod');
    const renamed = await api.patch(`/asset-groups/${id}`, { name: 'Prod (us-east-1)', filter: 'tags.env = prod AND region = us-east-1' });
    expect(renamed).toMatchObject({ name: 'Prod (us-east-1)', description: 'prod-tagged', member_count: 2 });
    await api.patch(`/asset-groups/${id}`, { name: 'vpc a' }, 409);
    await api.patch(`/asset-groups/${id}`, { colour: 'red' }, 400);
  });

  it('answer 404 to another tenant, 409 for a taken name, 403 to read-only writers', async () => {
    const theirs = client(t, other.id, other.admin.token);
    await theirs.get(`/asset-groups/${id}`, 404);
    await theirs.get(`/asset-groups/${id}/members`, 404);
    await theirs.del(`/asset-groups/${id}`, 404);
    await api.post('/asset-groups', { name: 'PROD (US-EAST-1)', filter: 'name = x' }, 409);
    await client(t, tenant.id, tenant.users['read-only'].token).post('/asset-groups', { name: 'x', filter: 'name = x' }, 403);
    await api.get(`/asset-groups/${randomUUID()}`, 404);
  });

  it('are deleted, audit-logged', async () => {
    await api.del(`/asset-groups/${id}`);
    await api.get(`/asset-groups/${id}`, 404);
    await api.get(`/asset-groups/${id}/members`, 404);
    const audit = await t.deps.database.db.selectFrom('audit_logs').select('action').where('target_id', '=', id).execute();
    expect(audit.map((a) => a.action).sort()).toEqual(['asset_group.created', 'asset_group.deleted', 'asset_group.updated']);
  });
});
