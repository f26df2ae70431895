import { describe, expect, it } from 'vitest';
import { layoutGraph, type Diagram } from '../../src/modules/exports/render/layout.js';
import { renderGraph, pngScale, MAX_PNG_PIXELS, OVERVIEW_MIN_NODES } from '../../src/modules/exports/render/render.js';
import { drawioChunks } from '../../src/modules/exports/render/drawio.js';
import { svgChunks } from '../../src/modules/exports/render/svg.js';
import { buildOverview, layoutOverview, overviewSvgChunks } from '../../src/modules/exports/render/overview.js';
import { shapeOf } from '../../src/modules/exports/render/aws-shapes.js';
import type { GraphEdge, GraphNode, RenderGraph } from '../../src/modules/exports/render/model.js';
import { HEADER_H, ICON, ICON_X, ITEM_H, ITEM_W, NAME_FONT, PAD, TYPE_FONT, itemLabels, textWidth } from '../../src/modules/exports/render/style.js';
import { estate, parseDrawio, pngSize } from './helpers.js';

/** The test estate as the renderer receives it (what graph-source.ts reads), some nodes with findings. */
function renderInput(count: number): RenderGraph {
  const { nodes, edges } = estate(count);
  return {
    nodes: nodes.map((raw, i) => {
      const n = raw as {
        provider: string;
        region: string;
        type: string;
        native_id: string;
        name: string;
        account_id: string;
        properties: { configuration: { vpcId?: string; subnetId?: string } };
      };
      const container = n.type === 'aws.ec2.vpc' || n.type === 'aws.ec2.subnet';
      return {
        id: `aws:${n.region}:${n.type}:${n.native_id}`,
        name: n.name,
        type: n.type,
        provider: n.provider,
        region: n.region,
        account: n.account_id,
        nativeId: n.native_id,
        vpc: n.type === 'aws.ec2.vpc' ? null : (n.properties.configuration.vpcId ?? null),
        subnet: container ? null : (n.properties.configuration.subnetId ?? null),
        severity: i % 7 === 0 ? 'HIGH' : i % 11 === 0 ? 'CRITICAL' : null,
        findings: i % 7 === 0 ? 3 : i % 11 === 0 ? 1 : 0,
      } satisfies GraphNode;
    }),
    edges,
  };
}

const node = (id: string, type: string, account: string | null, extra: Partial<GraphNode> = {}): GraphNode => ({
  id,
  name: id,
  type,
  provider: 'aws',
  region: 'us-east-1',
  account,
  nativeId: id,
  vpc: null,
  subnet: null,
  severity: null,
  findings: 0,
  ...extra,
});

/**
 * A small estate shaped like CloudMapper's demo account (content/demo/): a VPC with a public and a
 * private subnet, instances, security groups, a load balancer, a database, IAM users and an
 * AWS-managed policy; the containment edges the aws plugin and Terraform write (in_vpc, in_subnet);
 * an interface owned by another account in the VPC; a Terraform bucket without an account.
 */
function demoLike(): RenderGraph {
  const A = '123456789012';
  const inVpc = { vpc: 'vpc-1' };
  const nodes: GraphNode[] = [
    node('vpc-1', 'aws.ec2.vpc', A, { name: 'Prod' }),
    node('subnet-pub', 'aws.ec2.subnet', A, { ...inVpc, name: 'Public 1a', variant: 'true' }),
    node('subnet-priv', 'aws.ec2.subnet', A, { ...inVpc, name: 'Private 1a', variant: 'false' }),
    node('bastion', 'aws.ec2.instance', A, { ...inVpc, subnet: 'subnet-pub', severity: 'CRITICAL', findings: 2 }),
    node('web1', 'aws.ec2.instance', A, { ...inVpc, subnet: 'subnet-priv' }),
    node('web2', 'aws.ec2.instance', A, { ...inVpc, subnet: 'subnet-priv' }),
    node('eni-other', 'aws.ec2.network_interface', '653711331788', { ...inVpc, subnet: 'subnet-pub' }),
    node('sg-web', 'aws.ec2.security_group', A, inVpc),
    node('sg-bastion', 'aws.ec2.security_group', A, inVpc),
    node('sg-db', 'aws.ec2.security_group', A, inVpc),
    node('alb', 'aws.elasticloadbalancingv2.load_balancer', A, { ...inVpc, variant: 'application' }),
    node('db', 'aws.rds.db_instance', A, inVpc),
    node('lambda', 'aws.lambda.function', A, inVpc),
    node('bucket', 'aws.s3.bucket', A),
    node('tf-bucket', 'aws.s3.bucket', null),
    node('trail', 'aws.cloudtrail.trail', A),
    node('key', 'aws.kms.key', A),
    node('igw', 'aws.ec2.internet_gateway', A, inVpc),
    node('vol', 'aws.ec2.volume', A),
    node('user', 'aws.iam.user', A, { region: 'global' }),
    node('group', 'aws.iam.group', A, { region: 'global' }),
    node('role', 'aws.iam.role', A, { region: 'global' }),
    node('managed-policy', 'aws.iam.policy', 'aws', { region: 'global', name: 'AmazonEC2RoleforSSM' }),
    node('alarm', 'aws.cloudwatch.alarm', A),
  ];
  const e = (source: string, target: string, type: string): GraphEdge => ({ source, target, type });
  const edges: GraphEdge[] = [
    e('subnet-pub', 'vpc-1', 'in_vpc'),
    e('subnet-priv', 'vpc-1', 'in_vpc'),
    e('bastion', 'subnet-pub', 'in_subnet'),
    e('web1', 'subnet-priv', 'in_subnet'),
    e('web1', 'vpc-1', 'in_vpc'),
    e('sg-web', 'vpc-1', 'in_vpc'),
    e('bastion', 'sg-bastion', 'uses_security_group'),
    e('web1', 'sg-web', 'uses_security_group'),
    e('web2', 'sg-web', 'uses_security_group'),
    e('eni-other', 'sg-bastion', 'uses_security_group'),
    e('alb', 'web1', 'routes_to'),
    e('alb', 'web2', 'routes_to'),
    e('db', 'sg-db', 'uses_security_group'),
    e('sg-db', 'sg-web', 'allows_from'),
    e('vol', 'bastion', 'attached_to'),
    e('bucket', 'key', 'encrypted_by'),
    e('trail', 'bucket', 'writes_to'),
    e('user', 'group', 'member_of'),
    e('group', 'managed-policy', 'has_policy'),
    e('role', 'managed-policy', 'has_policy'),
    e('alarm', 'missing-node', 'watches'),
  ];
  return { nodes, edges };
}

type Rect = { x: number; y: number; w: number; h: number };
const inside = (a: Rect, b: Rect) => a.x >= b.x - 0.01 && a.y >= b.y - 0.01 && a.x + a.w <= b.x + b.w + 0.01 && a.y + a.h <= b.y + b.h + 0.01;
const overlap = (a: Rect, b: Rect) => a.x < b.x + b.w - 0.01 && b.x < a.x + a.w - 0.01 && a.y < b.y + b.h - 0.01 && b.y < a.y + a.h - 0.01;

/** No two items overlap, every item sits in its container's content area, containers nest without overlapping siblings. */
function checkGeometry(d: Diagram) {
  const problems: string[] = [];
  const containers = new Map(d.containers.map((p) => [p.container.key, { x: p.x, y: p.y, w: p.w, h: p.h }]));
  for (const b of d.boxes) {
    const c = containers.get(b.container)!;
    const content = { x: c.x + PAD - 0.5, y: c.y + HEADER_H, w: c.w - 2 * PAD + 1, h: c.h - HEADER_H };
    if (!inside({ x: b.x, y: b.y, w: ITEM_W, h: ITEM_H }, content)) problems.push(`${b.node.id} outside ${b.container}`);
  }
  for (const p of d.containers) {
    if (p.container.parent && !inside(containers.get(p.container.key)!, containers.get(p.container.parent)!)) problems.push(`${p.container.key} outside its parent`);
    if (p.x + p.w > d.width || p.y + p.h > d.height) problems.push(`${p.container.key} outside the image`);
  }
  // Sweep by x: only items whose x ranges meet are compared.
  const boxes = d.boxes.map((b) => ({ x: b.x, y: b.y, w: ITEM_W, h: ITEM_H, id: b.node.id })).sort((a, b) => a.x - b.x);
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length && boxes[j]!.x < boxes[i]!.x + ITEM_W; j++) {
      if (overlap(boxes[i]!, boxes[j]!)) problems.push(`${boxes[i]!.id} overlaps ${boxes[j]!.id}`);
    }
  }
  const byParent = new Map<string, Array<Rect & { key: string }>>();
  for (const p of d.containers) {
    const list = byParent.get(p.container.parent ?? '') ?? [];
    list.push({ x: p.x, y: p.y, w: p.w, h: p.h, key: p.container.key });
    byParent.set(p.container.parent ?? '', list);
  }
  for (const list of byParent.values()) {
    for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) if (overlap(list[i]!, list[j]!)) problems.push(`${list[i]!.key} overlaps ${list[j]!.key}`);
  }
  expect(problems).toEqual([]);
}

/** A segment crosses a rectangle's inside (touching its border does not count). */
function crosses([ax, ay]: [number, number], [bx, by]: [number, number], r: Rect): boolean {
  const e = 0.5;
  if (Math.max(ax, bx) <= r.x + e || Math.min(ax, bx) >= r.x + r.w - e) return false;
  if (Math.max(ay, by) <= r.y + e || Math.min(ay, by) >= r.y + r.h - e) return false;
  return true;
}

/**
 * Routed lines are orthogonal and cross no node's item (icon and labels) other than their own two
 * ends; their labels cover no node and no other line.
 */
function checkRoutes(d: Diagram) {
  const problems: string[] = [];
  const items = d.boxes.map((b) => ({ id: b.node.id, r: { x: b.x, y: b.y, w: ITEM_W, h: ITEM_H } }));
  // A node's ink: its icon, and its label lines below it.
  const ink = d.boxes.flatMap((b) => [
    { id: b.node.id, r: { x: b.x + ICON_X, y: b.y, w: ICON, h: ICON } },
    { id: b.node.id, r: { x: b.x, y: b.y + ICON, w: ITEM_W, h: ITEM_H - ICON } },
  ]);
  for (const e of d.edges.filter((x) => x.label)) {
    for (const it of ink) if (overlap(e.label!, it.r)) problems.push(`label "${e.label!.text}" of ${e.source}→${e.target} covers ${it.id}`);
    for (const other of d.edges) {
      if (other === e) continue;
      for (let i = 1; i < other.points.length; i++) {
        if (crosses(other.points[i - 1]!, other.points[i]!, e.label!))
          problems.push(`label "${e.label!.text}" of ${e.source}→${e.target} covers the line ${other.source}→${other.target}`);
      }
    }
  }
  for (const e of d.edges.filter((x) => x.routed)) {
    for (let i = 1; i < e.points.length; i++) {
      const [a, b] = [e.points[i - 1]!, e.points[i]!];
      if (Math.abs(a[0] - b[0]) > 0.01 && Math.abs(a[1] - b[1]) > 0.01) problems.push(`${e.source}→${e.target} has a diagonal piece`);
      for (const it of items) {
        if (it.id === e.source || it.id === e.target) continue;
        if (crosses(a, b, it.r)) problems.push(`${e.source}→${e.target} crosses ${it.id}`);
      }
    }
  }
  expect(problems).toEqual([]);
}

describe('layout', () => {
  it('groups by account, region, VPC and subnet, without overlaps, everything inside its container', async () => {
    const graph = renderInput(600);
    const d = await layoutGraph(graph);
    expect(d.boxes.length + d.containers.filter((c) => c.container.nodeId).length).toBe(600);
    const kinds = new Set(d.containers.map((c) => c.container.kind));
    expect([...kinds].sort()).toEqual(['account', 'global', 'region', 'subnet', 'vpc']);
    // A workload sits in its subnet, in its VPC, in its region, in its account.
    const box = d.boxes.find((b) => b.node.type === 'aws.rds.db_instance')!;
    const chain: string[] = [];
    const byKey = new Map(d.containers.map((c) => [c.container.key, c.container]));
    for (let k: string | null = box.container; k; k = byKey.get(k)!.parent) chain.push(byKey.get(k)!.kind);
    expect(chain).toEqual(['subnet', 'vpc', 'region', 'account']);
    checkGeometry(d);
    // Every edge is drawn once, as one line per pair of ends; most follow elkjs's routes.
    expect(d.edges.reduce((s, e) => s + e.edges.length, 0) + d.dropped.containment + d.dropped.dangling).toBe(graph.edges.length);
    expect(d.edges.filter((e) => e.routed).length).toBeGreaterThan(d.edges.length * 0.9);
    // Most lines carry their type (connects_to, routes_to) where it covers nothing.
    expect(d.edges.filter((e) => e.label).length).toBeGreaterThan(d.edges.length * 0.7);
    checkRoutes(d);
  });

  it('hands elkjs at most elkMaxItems items per container and grids larger ones', async () => {
    const subnetOf = (count: number, linked: boolean): RenderGraph => {
      const nodes: GraphNode[] = Array.from({ length: count }, (_, i) => ({
        id: `n${i}`,
        name: `instance-${i}`,
        type: 'aws.ec2.instance',
        provider: 'aws',
        region: 'eu-west-1',
        account: '123456789012',
        nativeId: `i-${i}`,
        vpc: 'vpc-1',
        subnet: 'subnet-1',
        severity: null,
        findings: 0,
      }));
      const edges = linked ? nodes.slice(1).map((n, i) => ({ source: nodes[i]!.id, target: n.id, type: 'connects_to' })) : [];
      return { nodes, edges };
    };
    // 40 linked boxes: elkjs lays the subnet out; the containers above hold one item each, no edge (grid).
    const small = await layoutGraph(subnetOf(40, true), { elkMaxItems: 60 });
    expect(small.stats).toMatchObject({ elk_containers: 1, grid_containers: 4, routed_edges: 39, straight_edges: 0 });
    checkGeometry(small);
    checkRoutes(small);
    // 2,000 linked boxes in one subnet never reach elkjs (one global layout would take seconds); their lines are straight.
    const big = await layoutGraph(subnetOf(2000, true), { elkMaxItems: 60 });
    expect(big.stats).toMatchObject({ elk_containers: 0, grid_containers: 5, routed_edges: 0, straight_edges: 1999 });
    checkGeometry(big);
  });

  it('cuts labels to fit under their icons, breaking long names over two lines', async () => {
    const long = 'payments-ledger-primary-database-with-an-exceptionally-long-name-eu-west-1';
    const labels = itemLabels(long, 'RDS DB instance');
    expect(labels.name).toHaveLength(2);
    expect(labels.name[0]).toBe('payments-ledger-primary-');
    expect(labels.name[1]!.endsWith('…')).toBe(true);
    for (const line of labels.name) expect(textWidth(line, NAME_FONT)).toBeLessThanOrEqual(ITEM_W);
    expect(textWidth(labels.type, TYPE_FONT)).toBeLessThanOrEqual(ITEM_W);
    expect(itemLabels('web-1', 'EC2 instance')).toEqual({ name: ['web-1'], type: 'EC2 instance' });
    expect(itemLabels('eni-1', 'Network interface', 'account 653711331788')).toEqual({ name: ['eni-1', 'account 653711331788'], type: 'Network interface' });
    const d = await layoutGraph({ nodes: [node('x', 'aws.ec2.instance', null, { name: long, severity: 'LOW', findings: 2 })], edges: [] });
    const svg = [...svgChunks(d)].join('');
    expect(svg).not.toContain(long);
    expect(svg).toContain('L 2');
  });
});

describe('where a node is drawn', () => {
  it('puts an interface of another account in the VPC that holds it, an account-less bucket in "No account", AWS-managed policies in "AWS managed"', async () => {
    const d = await layoutGraph(demoLike());
    const byKey = new Map(d.containers.map((c) => [c.container.key, c]));
    const path = (nodeId: string) => {
      const b = d.boxes.find((x) => x.node.id === nodeId)!;
      const out: string[] = [];
      for (let k: string | null = b.container; k; k = byKey.get(k)!.container.parent) out.push(byKey.get(k)!.container.label);
      return out;
    };
    expect(path('eni-other')).toEqual(['Subnet Public 1a (subnet-pub)', 'VPC Prod (vpc-1)', 'Region us-east-1', 'Account 123456789012']);
    expect(d.boxes.find((b) => b.node.id === 'eni-other')!.note).toBe('account 653711331788');
    expect(path('tf-bucket')).toEqual(['Region us-east-1', 'No account']);
    expect(path('managed-policy')).toEqual(['AWS managed']);
    expect(path('user')).toEqual(['Global', 'Account 123456789012']);
    // No second VPC or account appears for the interface's account.
    expect(d.containers.map((c) => c.container.label).filter((l) => l.includes('653711331788'))).toEqual([]);
  });

  it('keeps a VPC id per account: (account, region, VPC id) when both accounts hold one, the own account when the id is ambiguous', async () => {
    const nodes = [
      node('vpc-a', 'aws.ec2.vpc', '111111111111', { nativeId: 'vpc-1', name: 'A' }),
      node('vpc-b', 'aws.ec2.vpc', '222222222222', { nativeId: 'vpc-1', name: 'B' }),
      node('i-a', 'aws.ec2.instance', '111111111111', { vpc: 'vpc-1' }),
      node('i-b', 'aws.ec2.instance', '222222222222', { vpc: 'vpc-1' }),
      node('i-c', 'aws.ec2.instance', '333333333333', { vpc: 'vpc-1' }),
      node('i-none', 'aws.ec2.instance', null, { vpc: 'vpc-9' }),
    ];
    const d = await layoutGraph({ nodes, edges: [] });
    const containerOf = (id: string) => d.containers.find((c) => c.container.key === d.boxes.find((b) => b.node.id === id)!.container)!.container;
    expect(containerOf('i-a').label).toBe('VPC A (vpc-1)');
    expect(containerOf('i-a').account).toBe('111111111111');
    expect(containerOf('i-b').label).toBe('VPC B (vpc-1)');
    expect(containerOf('i-b').account).toBe('222222222222');
    // Two accounts hold vpc-1: the third account's instance stays in its own account.
    expect(containerOf('i-c').key).toBe('v:333333333333|us-east-1|vpc-1');
    expect(containerOf('i-none').key).toBe('v:|us-east-1|vpc-9');
    expect(d.containers.find((c) => c.container.key === containerOf('i-none').parent)!.container.parent).toBe('a:');
  });
});

describe('draw.io file', () => {
  it('draws nodes with draw.io AWS shapes, containers as AWS groups, no containment edges, directed edges on the layout route', async () => {
    const graph = demoLike();
    const d = await layoutGraph(graph);
    const xml = [...drawioChunks(d, { generatedAt: '2026-01-01T00:00:00.000Z' })].join('');
    const parsed = parseDrawio(xml);
    expect(parsed.diagrams).toBe(1);
    const byId = new Map(parsed.cells.map((c) => [c.id, c]));
    const nodes = new Map(parsed.cells.filter((c) => c.attrs.node_type).map((c) => [c.attrs.resource_id!, c]));
    // The shapes of draw.io's AWS library (Sidebar-AWS4.js), by type.
    const shapes: Record<string, string> = {
      bastion: 'shape=mxgraph.aws4.instance2;',
      'eni-other': 'shape=mxgraph.aws4.elastic_network_interface;',
      'sg-web': 'shape=mxgraph.aws4.generic_firewall;',
      alb: 'shape=mxgraph.aws4.application_load_balancer;',
      db: 'shape=mxgraph.aws4.rds_instance;',
      lambda: 'shape=mxgraph.aws4.lambda_function;',
      bucket: 'shape=mxgraph.aws4.bucket;',
      trail: 'shape=mxgraph.aws4.resourceIcon;resIcon=mxgraph.aws4.cloudtrail;',
      key: 'shape=mxgraph.aws4.data_encryption_key;',
      igw: 'shape=mxgraph.aws4.internet_gateway;',
      vol: 'shape=mxgraph.aws4.volume;',
      user: 'shape=mxgraph.aws4.user;',
      group: 'shape=mxgraph.aws4.users;',
      role: 'shape=mxgraph.aws4.role;',
      'managed-policy': 'shape=mxgraph.aws4.permissions;',
      alarm: 'shape=mxgraph.aws4.alarm;',
    };
    for (const [id, style] of Object.entries(shapes)) expect(nodes.get(id)!.style, id).toContain(style);
    for (const n of nodes.values()) {
      expect(n.style).toMatch(/shape=mxgraph\.aws4\./);
      expect(n.style).toContain('verticalLabelPosition=bottom');
      expect(byId.get(n.parent!)!.attrs.container_kind).toBeDefined();
    }
    // The shapes keep their proportions (a role is wider than high).
    expect(nodes.get('role')!.geometry.width! / nodes.get('role')!.geometry.height!).toBeCloseTo(78 / 44, 1);
    // Containers are draw.io's AWS groups: account, region, VPC, public and private subnet.
    const group = (label: string) => parsed.cells.find((c) => c.attrs.label?.startsWith(label))!.style;
    expect(group('Account 123456789012')).toContain('grIcon=mxgraph.aws4.group_account;');
    expect(group('Region us-east-1')).toContain('grIcon=mxgraph.aws4.group_region;');
    expect(group('VPC Prod')).toContain('grIcon=mxgraph.aws4.group_vpc2;');
    expect(group('Subnet Public 1a')).toContain('strokeColor=#7AA116;fillColor=#F2F6E8;');
    expect(group('Subnet Private 1a')).toContain('strokeColor=#00A4A6;fillColor=#E6F6F7;');
    expect(group('AWS managed')).toContain('grIcon=mxgraph.aws4.group_aws_cloud_alt;');
    // The bucket of the Terraform state without an account.
    expect(byId.get(nodes.get('tf-bucket')!.parent!)!.attrs.label).toBe('Region us-east-1');

    const edges = parsed.cells.filter((c) => c.edge);
    // Containment (in_vpc, in_subnet) is nesting only: 6 edges of 21 are not drawn, 1 has a missing end.
    expect(d.dropped).toEqual({ containment: 6, dangling: 1 });
    expect(edges).toHaveLength(14);
    expect(edges.map((e) => e.attrs.edge_type)).not.toContain('in_vpc');
    expect(edges.map((e) => e.attrs.edge_type)).not.toContain('in_subnet');
    const ancestors = (cellId: string) => {
      const out: string[] = [];
      for (let p = byId.get(cellId)!.parent; p && p !== '1' && p !== '0'; p = byId.get(p)!.parent) out.push(p);
      return out;
    };
    for (const e of edges) {
      // No loop onto a container that holds the other end.
      expect(e.source).not.toBe(e.target);
      expect(ancestors(e.source!)).not.toContain(e.target);
      expect(ancestors(e.target!)).not.toContain(e.source);
      // Directed, with a block arrowhead.
      expect(e.style).toContain('endArrow=block;endFill=1;');
    }
    // Each routed line keeps the layout's bend points as waypoints, and leaves and enters where the layout put its ends.
    const routed = d.edges.filter((x) => x.routed && x.points.length > 2);
    expect(routed.length).toBeGreaterThan(3);
    for (const placed of routed) {
      const cell = edges.find((c) => byId.get(c.source!)!.attrs.resource_id === placed.source && byId.get(c.target!)!.attrs.resource_id === placed.target)!;
      expect(cell.points).toEqual(placed.points.slice(1, -1).map(([x, y]) => [Math.round(x * 1000) / 1000, Math.round(y * 1000) / 1000]));
      expect(cell.style).toContain('edgeStyle=none;');
      expect(cell.style).toMatch(/exitX=[\d.]+;exitY=[\d.]+;exitDx=0;exitDy=0;exitPerimeter=0;entryX=[\d.]+;entryY=[\d.]+;/);
    }
    // The type as a label where it says something: "routes to", not "uses security group".
    const label = (source: string, target: string) =>
      edges.find((c) => byId.get(c.source!)!.attrs.resource_id === source && byId.get(c.target!)!.attrs.resource_id === target)!.attrs.label;
    expect(label('alb', 'web1')).toBe('routes to');
    expect(label('bastion', 'sg-bastion')).toBe('');
    checkRoutes(d);
  });

  it('is one mxfile diagram for a larger estate: every node once, every non-containment edge once, badges on nodes with findings', async () => {
    const graph = renderInput(300);
    const d = await layoutGraph(graph);
    const parsed = parseDrawio([...drawioChunks(d, { generatedAt: '2026-01-01T00:00:00.000Z' })].join(''));
    const containers = parsed.cells.filter((c) => c.attrs.container_kind);
    const nodes = parsed.cells.filter((c) => c.attrs.node_type);
    // VPC and subnet nodes are their containers, with the node's data.
    expect(containers.filter((c) => c.attrs.resource_id).length + nodes.length).toBe(300);
    for (const n of nodes) expect(n.style).toContain(`shape=mxgraph.aws4.`);
    const db = nodes.find((n) => n.attrs.open_findings === '3')!;
    expect(db.attrs.severity).toBe('HIGH');
    expect(parsed.cells.find((c) => c.parent === db.id && c.vertex)!.value).toBe('H 3');
    const edges = parsed.cells.filter((c) => c.edge);
    const byId = new Map(parsed.cells.map((c) => [c.id, c]));
    const drawn = new Set(
      edges.flatMap((e) => e.attrs.edge_type!.split(',').map((t) => `${byId.get(e.source!)!.attrs.resource_id}|${byId.get(e.target!)!.attrs.resource_id}|${t}`)),
    );
    for (const e of graph.edges) expect(drawn.has(`${e.source}|${e.target}|${e.type}`)).toBe(true);
  });

  it('escapes names that are not safe in XML', async () => {
    const d = await layoutGraph({ nodes: [node('a', 'aws.s3.bucket', '1', { name: '<script>&"\'\u0001' })], edges: [] });
    const parsed = parseDrawio([...drawioChunks(d)].join(''));
    expect(parsed.cells.find((c) => c.attrs.name)!.attrs.name).toBe('<script>&"\'');
  });
});

describe('PNG', () => {
  it('renders a PNG at 1.5x with the edges as arrows, and scales a huge diagram down to the pixel budget', async () => {
    const chunks: Buffer[] = [];
    const { stats, diagram } = await renderGraph(demoLike(), 'png', (c) => void chunks.push(Buffer.from(c)));
    const png = Buffer.concat(chunks);
    expect(stats.view).toBe('full');
    expect(pngSize(png)).toEqual({ width: Math.round(stats.width * 1.5), height: Math.round(stats.height * 1.5) });
    // One arrowhead per drawn line, each at the line's end, at the target's icon.
    const svg = [...svgChunks(diagram!)].join('');
    const heads = [...svg.matchAll(/<polygon points="([\d.]+),([\d.]+) /g)];
    expect(heads).toHaveLength(diagram!.edges.length);
    const web1 = diagram!.boxes.find((b) => b.node.id === 'web1')!;
    expect(heads.some((h) => Number(h[1]) === web1.x + ICON_X && Number(h[2]) === web1.y + ICON / 2)).toBe(true);
    const scale = pngScale(21_000, 20_000);
    expect(21_000 * scale * 20_000 * scale).toBeLessThanOrEqual(MAX_PNG_PIXELS);
    expect(pngScale(100_000, 300)).toBeCloseTo(0.16, 2);
  });

  it(`is an overview above ${OVERVIEW_MIN_NODES} nodes: accounts, regions and VPCs with their counts per type`, async () => {
    const graph = renderInput(2000);
    const overview = buildOverview(graph);
    const groups = [...overview.groups.values()];
    expect(new Set(groups.map((g) => g.kind))).toEqual(new Set(['account', 'region', 'global', 'vpc']));
    // Subnets fold into their VPC; every node is counted once.
    expect(groups.reduce((s, g) => s + g.rows.reduce((t, r) => t + r.count, 0), 0)).toBe(2000);
    expect(overview.roots.reduce((s, k) => s + overview.groups.get(k)!.total, 0)).toBe(2000);
    const vpc = groups.find((g) => g.kind === 'vpc')!;
    expect(vpc.rows.map((r) => r.label)).toEqual(expect.arrayContaining(['EC2 instance', 'Subnet', 'Security group']));
    expect(vpc.rows.find((r) => r.label === 'Subnet')!.count).toBe(3);
    const svg = [...overviewSvgChunks(layoutOverview(overview))].join('');
    expect(svg).toContain('Overview of 2,000 nodes');
    expect(svg).toContain(`×${vpc.rows[0]!.count}`);
    expect(svg).toContain(`${vpc.label} · ${vpc.total} nodes`);

    const chunks: Buffer[] = [];
    const { stats, diagram } = await renderGraph(graph, 'png', (c) => void chunks.push(Buffer.from(c)));
    expect(stats.view).toBe('overview');
    expect(diagram).toBeNull();
    const size = pngSize(Buffer.concat(chunks));
    // Readable once fitted to a screen: a few thousand pixels, drawn at 1.5x.
    expect(stats.scale).toBe(1.5);
    expect(size.width).toBeLessThan(6000);
    // At the threshold the PNG is still the full diagram; draw.io always is.
    const atThreshold = await renderGraph(renderInput(OVERVIEW_MIN_NODES), 'png', () => undefined);
    expect(atThreshold.stats.view).toBe('full');
    const drawio = await renderGraph(graph, 'drawio', () => undefined);
    expect(drawio.stats.view).toBe('full');
  }, 120_000);
});

describe('shapes', () => {
  it('maps the AWS types people draw to draw.io AWS shapes, and others to a general tile', () => {
    for (const type of [
      'aws.ec2.instance',
      'aws.rds.db_instance',
      'aws.s3.bucket',
      'aws.lambda.function',
      'aws.elasticloadbalancing.load_balancer',
      'aws.iam.role',
      'aws.iam.user',
      'aws.iam.policy',
      'aws.kms.key',
      'aws.ec2.security_group',
      'aws.ec2.network_interface',
      'aws.ec2.internet_gateway',
      'aws.cloudtrail.trail',
      'aws.cloudwatch.alarm',
      'aws.ec2.volume',
    ]) {
      expect(shapeOf(type).mapped, type).toBe(true);
    }
    expect(shapeOf('aws.elasticloadbalancingv2.load_balancer', 'network').glyph).toBe('network_load_balancer');
    expect(shapeOf('aws.custom.thing')).toMatchObject({ mapped: false, tile: true, glyph: 'general', label: 'aws.custom.thing' });
  });
});
