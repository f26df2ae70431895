import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { awsNode, putEdges, putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { activeBySeverity, client, expectedHealth, type Client } from './helpers.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let api: Client;

/*
 * The graph (edges by type; "<-" marks an edge traversed against its direction):
 *
 *   sg (SSH open to 0.0.0.0/0) -protects-> web1 -uses_role-> role-web <-trusts- role-admin -has_access-> db
 *   inet (*.internet.*) -exposes-> lb -forwards_to-> web2 -connects_to/allows_traffic_to-> db
 *   role-web -can_access-> table;  user -can_assume-> role-admin;  web1 -contains-> vol (structure)
 *   c0 -> c1 -> ... -> c8 (connects_to: a chain for the depth limit)
 *   f0 -> f1, f0 -> f2, ..., f0 -> f20 (connects_to: a fan for the node bound)
 */
const sg = fixtureNode('aws-ec2-sg-no-ssh-from-internet', 'violating', 'sg-open');
const web1 = fixtureNode('aws-ec2-instance-imdsv2-required', 'violating', 'i-web1');
const web2 = awsNode('aws.ec2.instance', 'i-web2');
const inet = { ...awsNode('aws.internet.gateway', 'igw-1'), name: 'Internet' };
const lb = awsNode('aws.elasticloadbalancingv2.load_balancer', 'lb-1');
const roleWeb = awsNode('aws.iam.role', 'role-web');
const roleAdmin = awsNode('aws.iam.role', 'role-admin');
const user = awsNode('aws.iam.user', 'alice');
const db = fixtureNode('aws-rds-instance-storage-encrypted', 'violating', 'db-1');
// A table, not a bucket: an empty bucket fails the S3 public-access rules and would count as exposed.
const table = awsNode('aws.dynamodb.table', 'orders-table');
const vol = awsNode('aws.ec2.volume', 'vol-1');
const fan = Array.from({ length: 21 }, (_, i) => awsNode('aws.custom.fan', `f${i}`));
const chain = Array.from({ length: 9 }, (_, i) => awsNode('aws.custom.hop', `c${i}`));
const id = {
  sg: nodeIdOf(sg),
  web1: nodeIdOf(web1),
  web2: nodeIdOf(web2),
  inet: nodeIdOf(inet),
  lb: nodeIdOf(lb),
  roleWeb: nodeIdOf(roleWeb),
  roleAdmin: nodeIdOf(roleAdmin),
  user: nodeIdOf(user),
  db: nodeIdOf(db),
  table: nodeIdOf(table),
  vol: nodeIdOf(vol),
};
const c = chain.map(nodeIdOf);
const f = fan.map(nodeIdOf);

type Path = { length: number; node_ids: string[]; hops: Array<{ from: string; to: string; edge_types: string[]; edge_ids: string[] }> };

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  const token = tenant.users['security-analyst'].token;
  api = client(t, tenant.id, token);
  await putNodes(t, token, tenant.id, [sg, web1, web2, inet, lb, roleWeb, roleAdmin, user, db, table, vol, ...chain, ...fan]);
  await putEdges(t, token, tenant.id, [
    { source: id.sg, target: id.web1, type: 'protects' },
    { source: id.web1, target: id.roleWeb, type: 'uses_role' },
    { source: id.roleAdmin, target: id.roleWeb, type: 'trusts' },
    { source: id.roleAdmin, target: id.db, type: 'has_access' },
    { source: id.inet, target: id.lb, type: 'exposes' },
    { source: id.lb, target: id.web2, type: 'forwards_to' },
    { source: id.web2, target: id.db, type: 'connects_to' },
    { source: id.web2, target: id.db, type: 'allows_traffic_to' },
    { source: id.roleWeb, target: id.table, type: 'can_access' },
    { source: id.user, target: id.roleAdmin, type: 'can_assume' },
    { source: id.web1, target: id.vol, type: 'contains' },
    ...c.slice(1).map((target, i) => ({ source: c[i]!, target, type: 'connects_to' })),
    ...f.slice(1).map((target) => ({ source: f[0]!, target, type: 'connects_to' })),
  ]);
  await audit(t, token, tenant.id);
  // The other tenant holds the same node ids: traversals must never cross over.
  await putNodes(t, other.admin.token, other.id, [web1, db]);
  await putEdges(t, other.admin.token, other.id, [{ source: id.web1, target: id.db, type: 'connects_to' }]);
});
afterAll(() => t.close());

const trace = (body: Record<string, unknown>, expect = 200) => api.post('/pathtracer/trace', body, expect);
const blast = (body: Record<string, unknown>, expect = 200) => api.post('/pathtracer/blast-radius', body, expect);

describe('POST /pathtracer/trace', () => {
  it('follows IAM edges, a trust relation against its direction, and names every hop', async () => {
    const res = await trace({ source: id.web1, target: id.db });
    expect(res).toMatchObject({ source: id.web1, target: id.db, max_depth: 6, shortest_length: 3, truncated: false, truncation_reason: null, paths_capped: false });
    expect(res.paths).toHaveLength(1);
    const [path] = res.paths as Path[];
    expect(path!.node_ids).toEqual([id.web1, id.roleWeb, id.roleAdmin, id.db]);
    expect(path!.hops.map((h) => h.edge_types)).toEqual([['uses_role'], ['trusts'], ['has_access']]);
    // The trusts hop goes role-web -> role-admin although the edge points the other way.
    expect(path!.hops[1]).toMatchObject({ from: id.roleWeb, to: id.roleAdmin });
    expect(path!.hops.every((h) => h.edge_ids.length === 1)).toBe(true);
    expect(res.nodes[id.roleAdmin]).toEqual({ name: 'role-admin', type: 'aws.iam.role', region: 'us-east-1' });
  });

  it('lists paths shortest first, one hop per node pair with every edge type that allows it', async () => {
    const res = await trace({ source: id.lb, target: id.db });
    const paths = res.paths as Path[];
    expect(paths.map((p) => p.length)).toEqual([2]);
    expect(paths[0]!.node_ids).toEqual([id.lb, id.web2, id.db]);
    expect(paths[0]!.hops[1]!.edge_types).toEqual(['allows_traffic_to', 'connects_to']);
    expect(paths[0]!.hops[1]!.edge_ids).toHaveLength(2);
    const assume = await trace({ source: id.user, target: id.db });
    expect((assume.paths as Path[]).map((p) => p.node_ids)).toEqual([[id.user, id.roleAdmin, id.db]]);
    expect(assume.paths[0].hops[0].edge_types).toEqual(['can_assume']);
  });

  it('traces from the Internet through exposed security groups and Internet nodes, shortest first', async () => {
    // Precondition: the database is not itself exposed (no open-to-world finding of its own).
    const exposure = await api.get(`/findings?resource_id=${encodeURIComponent(id.db)}&rule_id=aws-rds-instance-not-publicly-accessible`);
    expect(exposure.total).toBe(0);
    const res = await trace({ source: 'internet', target: id.db });
    const paths = res.paths as Path[];
    expect(res.shortest_length).toBe(3);
    expect(paths[0]!.node_ids).toEqual(['internet', id.lb, id.web2, id.db]);
    expect(paths[0]!.hops[0]!.edge_types).toEqual(['internet']);
    const lengths = paths.map((p) => p.length);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
    const ids = paths.map((p) => p.node_ids.join(' > '));
    // web1 is reachable through the open security group that protects it.
    expect(ids).toContain(['internet', id.web1, id.roleWeb, id.roleAdmin, id.db].join(' > '));
    expect(ids).toContain(['internet', id.sg, id.web1, id.roleWeb, id.roleAdmin, id.db].join(' > '));
    expect(ids).toContain(['internet', id.inet, id.lb, id.web2, id.db].join(' > '));
    expect(new Set(ids).size).toBe(ids.length);
    expect(res.nodes.internet).toEqual({ name: 'Internet', type: 'internet', region: '' });
    // Nothing leaves the database: no path back out.
    expect((await trace({ source: id.db, target: 'internet' })).paths).toEqual([]);
  });

  it('stops at max_depth and caps the paths at max_paths', async () => {
    expect((await trace({ source: c[0], target: c[8] })).paths).toEqual([]);
    const deep = await trace({ source: c[0], target: c[8], max_depth: 8 });
    expect(deep.paths[0].node_ids).toEqual(c);
    expect(deep.shortest_length).toBe(8);
    const shallow = await trace({ source: 'internet', target: id.db, max_depth: 3 });
    expect((shallow.paths as Path[]).map((p) => p.length)).toEqual([3]);
    const capped = await trace({ source: 'internet', target: id.db, max_paths: 2 });
    expect(capped.paths).toHaveLength(2);
    expect(capped.paths_capped).toBe(true);
    expect(capped.paths[0].length).toBe(3);
  });

  it('follows only the named edge types, in the given direction; structural edges only when named', async () => {
    expect((await trace({ source: id.web1, target: id.db, edge_types: ['connects_to'] })).paths).toEqual([]);
    const named = await trace({ source: id.web1, target: id.db, edge_types: ['uses_role', 'trusts', 'has_access'] });
    expect(named.paths).toHaveLength(1);
    expect(named.edge_types).toEqual([
      { type: 'uses_role', direction: 'forward' },
      { type: 'trusts', direction: 'reverse' },
      { type: 'has_access', direction: 'forward' },
    ]);
    expect((await trace({ source: id.web1, target: id.db, edge_types: ['uses_role', 'trusts:forward', 'has_access'] })).paths).toEqual([]);
    expect((await trace({ source: id.web1, target: id.vol })).paths).toEqual([]);
    expect((await trace({ source: id.web1, target: id.vol, edge_types: ['contains'] })).paths[0].node_ids).toEqual([id.web1, id.vol]);
    expect((await trace({ source: id.vol, target: id.web1, edge_types: ['contains:both'] })).paths).toHaveLength(1);
  });

  it('reports a bound that stopped the search (truncated, truncation_reason)', async () => {
    const res = await trace({ source: f[0], target: c[8], max_nodes: 10 });
    expect(res).toMatchObject({ truncated: true, truncation_reason: 'max_nodes', paths: [] });
    expect(res.explored.nodes).toBe(10);
    // Without the bound the same search completes: no path, and nothing hidden.
    expect(await trace({ source: f[0], target: c[8] })).toMatchObject({ truncated: false, truncation_reason: null, paths: [] });
  });

  it('answers 400 for bad input, 404 for unknown nodes or another tenant, 401 and 403 without access', async () => {
    const same = await trace({ source: id.web1, target: id.web1 }, 400);
    expect(same.error.message).toBe('source and target are the same');
    const direction = await trace({ source: id.web1, target: id.db, edge_types: ['trusts:sideways'] }, 400);
    expect(direction.error.message).toMatch(/unknown direction "sideways"/);
    const type = await trace({ source: id.web1, target: id.db, edge_types: ['Not A Type'] }, 400);
    expect(type.error.message).toMatch(/is not an edge type/);
    await trace({ source: id.web1, target: id.db, max_depth: 13 }, 400);
    await trace({ source: id.web1, target: id.db, max_depth: 0 }, 400);
    await trace({ source: id.web1, target: id.db, colour: 'red' }, 400);
    await trace({ source: id.web1 }, 400);
    const missing = await trace({ source: id.web1, target: 'aws:us-east-1:aws.s3.bucket:nope' }, 404);
    expect(missing.error.message).toBe('target node not found: aws:us-east-1:aws.s3.bucket:nope');
    const foreign = await client(t, other.id, other.admin.token).post('/pathtracer/trace', { source: id.web1, target: id.roleWeb }, 404);
    expect(foreign.error.message).toMatch(/^target node not found/);
    // The other tenant's own edge web1 -> db is theirs alone.
    const theirs = await client(t, other.id, other.admin.token).post('/pathtracer/trace', { source: id.web1, target: id.db });
    expect(theirs.paths.map((p: Path) => p.node_ids)).toEqual([[id.web1, id.db]]);
    await call(t.app, null, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/pathtracer/trace`, payload: { source: id.web1, target: id.db }, expect: 401 });
    const key = await createApiKey(t, tenant, { permissions: ['findings:read'] });
    await call(t.app, key.key, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/pathtracer/trace`, payload: { source: id.web1, target: id.db }, expect: 403 });
    // Read-only users may trace (nodes:read).
    await client(t, tenant.id, tenant.users['read-only'].token).post('/pathtracer/trace', { source: id.web1, target: id.db });
  });
});

describe('POST /pathtracer/blast-radius', () => {
  it('reaches everything downstream of a node, by depth, with what it holds', async () => {
    const data = await api.post('/applications', { name: 'data stores', filter: 'type = aws.rds.db_instance OR type = aws.dynamodb.table' }, 201);
    const svc = await api.post('/services', { name: 'Core data', criticality: 'high', application_ids: [data.id] }, 201);
    const res = await blast({ source: id.web1 });
    expect(res).toMatchObject({ source: id.web1, total_reached: 4, depth_reached: 3, truncated: false, depth_limited: false });
    expect(res.by_depth).toEqual([
      { depth: 1, nodes: 1 },
      { depth: 2, nodes: 2 },
      { depth: 3, nodes: 1 },
    ]);
    const byId = Object.fromEntries(res.nodes.map((n: { id: string }) => [n.id, n]));
    expect(Object.keys(byId).sort()).toEqual([id.roleWeb, id.roleAdmin, id.table, id.db].sort());
    expect(byId[id.roleAdmin]).toMatchObject({ depth: 2, via: { from: id.roleWeb, edge_types: ['trusts'] } });
    expect(byId[id.db]).toMatchObject({ depth: 3, type: 'aws.rds.db_instance', via: { from: id.roleAdmin, edge_types: ['has_access'] } });
    expect(res.by_type).toEqual([
      { type: 'aws.iam.role', nodes: 2 },
      { type: 'aws.dynamodb.table', nodes: 1 },
      { type: 'aws.rds.db_instance', nodes: 1 },
    ]);
    const expected = await activeBySeverity(api, [id.roleWeb, id.roleAdmin, id.table, id.db]);
    expect(res.findings_by_severity).toEqual(expected);
    expect(res.health).toBe(expectedHealth(expected));
    expect(res.applications).toEqual([{ id: data.id, name: 'data stores', derived: false, reached_resources: 2 }]);
    expect(res.services).toEqual([{ id: svc.id, name: 'Core data', criticality: 'high', reached_resources: 2 }]);
    // Structural edges are not followed unless named.
    expect(res.nodes.some((n: { id: string }) => n.id === id.vol)).toBe(false);
    const withContains = await blast({ source: id.web1, edge_types: ['contains'] });
    expect(withContains.nodes.map((n: { id: string }) => n.id)).toEqual([id.vol]);
  });

  it('from the Internet: everything an attacker outside could reach', async () => {
    const res = await blast({ source: 'internet' });
    const reached = new Set(res.nodes.map((n: { id: string }) => n.id));
    for (const n of [id.sg, id.web1, id.inet, id.lb, id.web2, id.db, id.roleWeb, id.roleAdmin, id.table]) expect(reached.has(n), n).toBe(true);
    for (const n of [id.user, id.vol, c[0]]) expect(reached.has(n), n).toBe(false);
    expect(res.nodes.find((n: { id: string }) => n.id === id.lb)).toMatchObject({ depth: 1, via: { from: 'internet', edge_types: ['internet'] } });
  });

  it('is bounded by max_depth, max_nodes and the listing limit, and says so', async () => {
    const shallow = await blast({ source: c[0], max_depth: 3 });
    expect(shallow.nodes.map((n: { id: string }) => n.id)).toEqual(c.slice(1, 4));
    expect(shallow).toMatchObject({ total_reached: 3, depth_limited: true, truncated: false });
    expect((await blast({ source: c[0] })).depth_limited).toBe(false);
    const small = await blast({ source: c[0], max_nodes: 2 });
    expect(small).toMatchObject({ total_reached: 2, truncated: true, truncation_reason: 'max_nodes' });
    const listed = await blast({ source: c[0], limit: 2 });
    expect(listed).toMatchObject({ total_reached: 8, nodes_listed: 2 });
    expect(listed.nodes.map((n: { id: string }) => n.id)).toEqual(c.slice(1, 3));
  });

  it('answers 400 for bad input and 404 for an unknown node', async () => {
    await blast({ source: id.web1, max_depth: 33 }, 400);
    await blast({ source: id.web1, max_nodes: 100_001 }, 400);
    await blast({ source: '' }, 400);
    await blast({ source: id.web1, edge_types: ['x:up'] }, 400);
    const missing = await blast({ source: 'aws:us-east-1:aws.s3.bucket:nope' }, 404);
    expect(missing.error.message).toBe('source node not found: aws:us-east-1:aws.s3.bucket:nope');
    await client(t, other.id, other.admin.token).post('/pathtracer/blast-radius', { source: id.roleWeb }, 404);
  });
});
