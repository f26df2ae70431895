import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { awsNode, putEdges, putNodes } from '../harness/graph.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let token: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
});
afterAll(() => t.close());

const nodesUrl = () => `/api/v1/tenants/${tenant.id}/nodes`;

describe('nodes', () => {
  it('upserts one node (201) with the default id <provider>:<region>:<type>:<native_id>', async () => {
    const res = await call(t.app, token, { method: 'POST', url: nodesUrl(), payload: awsNode('aws.s3.bucket', 'logs-bucket', { tags: { env: 'prod' } }) });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      id: 'aws:us-east-1:aws.s3.bucket:logs-bucket',
      type: 'aws.s3.bucket',
      tags: { env: 'prod' },
      workspace_id: tenant.defaultWorkspaceId,
    });
  });

  it('upserts a batch with a few statements and reports created and updated', async () => {
    const nodes = Array.from({ length: 1500 }, (_, i) => awsNode('aws.ec2.instance', `i-${String(i).padStart(5, '0')}`));
    const first = await putNodes(t, token, tenant.id, nodes);
    expect(first).toMatchObject({ created: 1500, updated: 0 });
    expect(first.items).toHaveLength(1500);
    const again = await putNodes(t, token, tenant.id, [...nodes.slice(0, 10).map((n) => ({ ...n, name: 'renamed' })), awsNode('aws.ec2.instance', 'i-new')]);
    expect(again).toMatchObject({ created: 1, updated: 10 });
  });

  it('accepts up to 5,000 nodes and refuses 5,001 with 400', async () => {
    const nodes = Array.from({ length: 5001 }, (_, i) => awsNode('aws.ec2.volume', `vol-${i}`));
    const res = await call(t.app, token, { method: 'POST', url: nodesUrl(), payload: { nodes } });
    expect(res.statusCode).toBe(400);
    expect((await putNodes(t, token, tenant.id, nodes.slice(0, 5000))).created).toBe(5000);
  });

  it('checks the id shape and the type form (400)', async () => {
    const wrongId = await call(t.app, token, { method: 'POST', url: nodesUrl(), payload: { ...awsNode('aws.s3.bucket', 'b1'), id: 'b1' } });
    expect(wrongId.statusCode).toBe(400);
    expect(wrongId.json().error.message).toMatch(/must have the shape <provider>:<region>:<type>:<native_id>/);
    const otherType = await call(t.app, token, { method: 'POST', url: nodesUrl(), payload: { ...awsNode('aws.s3.bucket', 'b1'), id: 'aws:us-east-1:aws.s3.other:b1' } });
    expect(otherType.statusCode).toBe(400);
    const ok = await call(t.app, token, { method: 'POST', url: nodesUrl(), payload: { ...awsNode('aws.s3.bucket', 'b1'), id: 'aws:us-east-1:aws.s3.bucket:arn:aws:s3:::b1' } });
    expect(ok.statusCode).toBe(201);
    const badType = await call(t.app, token, { method: 'POST', url: nodesUrl(), payload: awsNode('S3Bucket', 'b2') });
    expect(badType.statusCode).toBe(400);
    const providerMismatch = await call(t.app, token, { method: 'POST', url: nodesUrl(), payload: awsNode('gcp.storage.bucket', 'b3') });
    expect(providerMismatch.statusCode).toBe(400);
    const batchError = await call(t.app, token, {
      method: 'POST',
      url: nodesUrl(),
      payload: { nodes: [awsNode('aws.s3.bucket', 'ok'), { ...awsNode('aws.s3.bucket', 'x'), id: 'bad' }] },
    });
    expect(batchError.statusCode).toBe(400);
    expect(batchError.json().error.details).toMatchObject({ index: 1, field: 'id' });
    const unknownField = await call(t.app, token, { method: 'POST', url: nodesUrl(), payload: { ...awsNode('aws.s3.bucket', 'b4'), colour: 'red' } });
    expect(unknownField.statusCode).toBe(400);
  });

  it('lists with types (comma-separated), region, paging and sort', async () => {
    await putNodes(t, token, tenant.id, [
      awsNode('aws.rds.db_instance', 'db-a', { region: 'eu-west-1', name: 'alpha' }),
      awsNode('aws.rds.db_instance', 'db-b', { region: 'eu-west-1', name: 'bravo' }),
      awsNode('aws.kms.key', 'k-1', { region: 'eu-west-1', name: 'charlie' }),
    ]);
    const res = await call(t.app, token, { url: `${nodesUrl()}?types=aws.rds.db_instance,aws.kms.key&region=eu-west-1&sort=-name&per_page=2`, expect: 200 });
    expect(res.json()).toMatchObject({ total: 3, page: 1, per_page: 2, total_pages: 2 });
    expect(res.json().items.map((n: { name: string }) => n.name)).toEqual(['charlie', 'bravo']);
    const page2 = await call(t.app, token, { url: `${nodesUrl()}?types=aws.rds.db_instance,aws.kms.key&region=eu-west-1&sort=-name&per_page=2&page=2`, expect: 200 });
    expect(page2.json().items.map((n: { name: string }) => n.name)).toEqual(['alpha']);
    expect((await call(t.app, token, { url: `${nodesUrl()}?sort=colour` })).statusCode).toBe(400);
    expect((await call(t.app, token, { url: `${nodesUrl()}?per_page=501` })).statusCode).toBe(400);
    expect((await call(t.app, token, { url: `${nodesUrl()}?page=0` })).statusCode).toBe(400);
    const defaults = await call(t.app, token, { url: nodesUrl(), expect: 200 });
    expect(defaults.json()).toMatchObject({ page: 1, per_page: 50 });
  });

  it('reads a node by id (ids with colons and slashes, URL-encoded); 404 for unknown', async () => {
    const node = awsNode('aws.ec2.security_group', 'sg/with/slash');
    await putNodes(t, token, tenant.id, [node]);
    const id = 'aws:us-east-1:aws.ec2.security_group:sg/with/slash';
    const res = await call(t.app, token, { url: `${nodesUrl()}/${encodeURIComponent(id)}`, expect: 200 });
    expect(res.json().id).toBe(id);
    expect((await call(t.app, token, { url: `${nodesUrl()}/${encodeURIComponent('aws:x:aws.s3.bucket:none')}` })).statusCode).toBe(404);
  });

  it("does not show another tenant's or another workspace's nodes", async () => {
    const id = encodeURIComponent('aws:us-east-1:aws.s3.bucket:logs-bucket');
    expect((await call(t.app, other.admin.token, { url: `/api/v1/tenants/${other.id}/nodes/${id}` })).statusCode).toBe(404);
    expect((await call(t.app, other.admin.token, { url: `/api/v1/tenants/${tenant.id}/nodes/${id}` })).statusCode).toBe(403);
    const ws = await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'isolated' }, expect: 201 });
    const switched = await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/auth/switch-workspace', payload: { workspace_id: ws.json().id }, expect: 200 });
    expect((await call(t.app, switched.json().token, { url: `${nodesUrl()}/${id}` })).statusCode).toBe(404);
    expect((await call(t.app, switched.json().token, { url: nodesUrl(), expect: 200 })).json().total).toBe(0);
  });

  it('read-only may read but not write nodes', async () => {
    const ro = tenant.users['read-only'].token;
    expect((await call(t.app, ro, { url: nodesUrl() })).statusCode).toBe(200);
    expect((await call(t.app, ro, { method: 'POST', url: nodesUrl(), payload: awsNode('aws.s3.bucket', 'x') })).statusCode).toBe(403);
  });
});

describe('edges', () => {
  it('creates edges between nodes of the workspace, lists by node and type, deletes', async () => {
    await putNodes(t, token, tenant.id, [awsNode('aws.ec2.security_group', 'sg-1'), awsNode('aws.ec2.instance', 'i-edge-1'), awsNode('aws.ec2.instance', 'i-edge-2')]);
    const sg = 'aws:us-east-1:aws.ec2.security_group:sg-1';
    const single = await call(t.app, token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/edges`,
      payload: { source: sg, target: 'aws:us-east-1:aws.ec2.instance:i-edge-1', type: 'protects' },
    });
    expect(single.statusCode).toBe(201);
    expect(single.json()).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), source: sg, type: 'protects' });
    const batch = await putEdges(t, token, tenant.id, [
      { source: sg, target: 'aws:us-east-1:aws.ec2.instance:i-edge-1', type: 'protects', properties: { port: 22 } },
      { source: sg, target: 'aws:us-east-1:aws.ec2.instance:i-edge-2', type: 'protects' },
    ]);
    expect(batch).toMatchObject({ created: 1, updated: 1 });
    expect(batch.items[0]!.id).toBe(single.json().id);
    const byNode = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/edges?node=${encodeURIComponent('aws:us-east-1:aws.ec2.instance:i-edge-2')}`, expect: 200 });
    expect(byNode.json().total).toBe(1);
    const byType = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/edges?type=protects`, expect: 200 });
    expect(byType.json().total).toBe(2);
    expect((await call(t.app, token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/edges/${single.json().id}` })).statusCode).toBe(204);
    expect((await call(t.app, token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/edges/${single.json().id}` })).statusCode).toBe(404);
  });

  it('refuses edges whose ends are not nodes of the workspace (400 naming them)', async () => {
    const res = await call(t.app, token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/edges`,
      payload: { source: 'aws:us-east-1:aws.ec2.security_group:sg-1', target: 'aws:us-east-1:aws.ec2.instance:ghost', type: 'protects' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.missing_nodes).toEqual(['aws:us-east-1:aws.ec2.instance:ghost']);
  });

  it('deleting a node removes its edges', async () => {
    const target = 'aws:us-east-1:aws.ec2.instance:i-edge-2';
    expect((await call(t.app, token, { method: 'DELETE', url: `${nodesUrl()}/${encodeURIComponent(target)}` })).statusCode).toBe(204);
    const edges = await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/edges?node=${encodeURIComponent(target)}`, expect: 200 });
    expect(edges.json().total).toBe(0);
    expect((await call(t.app, token, { method: 'DELETE', url: `${nodesUrl()}/${encodeURIComponent(target)}` })).statusCode).toBe(404);
  });
});
