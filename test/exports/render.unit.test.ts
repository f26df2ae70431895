import { describe, expect, it } from 'vitest';
import { layoutGraph, type Diagram } from '../../src/modules/exports/render/layout.js';
import { renderGraph, pngScale, MAX_PNG_PIXELS } from '../../src/modules/exports/render/render.js';
import { drawioChunks } from '../../src/modules/exports/render/drawio.js';
import { svgChunks } from '../../src/modules/exports/render/svg.js';
import type { GraphNode, RenderGraph } from '../../src/modules/exports/render/model.js';
import { BOX_H, BOX_W, CATEGORY_STYLE, HEADER_H, NAME_FONT, PAD, STRIPE_W, TYPE_FONT, boxLabels, categoryOf, textWidth } from '../../src/modules/exports/render/style.js';
import { estate, parseDrawio, pngSize } from './helpers.js';

/** The test estate as the renderer receives it (what graph-source.ts reads), some nodes with findings. */
function renderInput(count: number): RenderGraph {
  const { nodes, edges } = estate(count);
  return {
    nodes: nodes.map((raw, i) => {
      const n = raw as { provider: string; region: string; type: string; native_id: string; name: string; account_id: string; properties: { configuration: { vpcId?: string; subnetId?: string } } };
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

type Rect = { x: number; y: number; w: number; h: number };
const inside = (a: Rect, b: Rect) => a.x >= b.x - 0.01 && a.y >= b.y - 0.01 && a.x + a.w <= b.x + b.w + 0.01 && a.y + a.h <= b.y + b.h + 0.01;
const overlap = (a: Rect, b: Rect) => a.x < b.x + b.w - 0.01 && b.x < a.x + a.w - 0.01 && a.y < b.y + b.h - 0.01 && b.y < a.y + a.h - 0.01;

/** No two boxes overlap, every box sits in its container's content area, containers nest without overlapping siblings. */
function checkGeometry(d: Diagram) {
  const problems: string[] = [];
  const containers = new Map(d.containers.map((p) => [p.container.key, { x: p.x, y: p.y, w: p.w, h: p.h }]));
  for (const b of d.boxes) {
    const c = containers.get(b.container)!;
    const content = { x: c.x + PAD - 0.5, y: c.y + HEADER_H, w: c.w - 2 * PAD + 1, h: c.h - HEADER_H };
    if (!inside({ x: b.x, y: b.y, w: BOX_W, h: BOX_H }, content)) problems.push(`${b.node.id} outside ${b.container}`);
  }
  for (const p of d.containers) {
    if (p.container.parent && !inside(containers.get(p.container.key)!, containers.get(p.container.parent)!)) problems.push(`${p.container.key} outside its parent`);
    if (p.x + p.w > d.width || p.y + p.h > d.height) problems.push(`${p.container.key} outside the image`);
  }
  // Sweep by x: only boxes whose x ranges meet are compared.
  const boxes = d.boxes.map((b) => ({ x: b.x, y: b.y, w: BOX_W, h: BOX_H, id: b.node.id })).sort((a, b) => a.x - b.x);
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length && boxes[j]!.x < boxes[i]!.x + BOX_W; j++) {
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

describe('layout', () => {
  it('groups by account, region, VPC and subnet, without overlaps, everything inside its container', async () => {
    const graph = renderInput(600);
    const d = await layoutGraph(graph);
    expect(d.boxes.length + d.containers.filter((c) => c.container.nodeId).length).toBe(600);
    const kinds = new Set(d.containers.map((c) => c.container.kind));
    expect([...kinds].sort()).toEqual(['account', 'region', 'subnet', 'vpc']);
    // A workload sits in its subnet, in its VPC, in its region, in its account.
    const box = d.boxes.find((b) => b.node.type === 'aws.rds.db_instance')!;
    const chain: string[] = [];
    const byKey = new Map(d.containers.map((c) => [c.container.key, c.container]));
    for (let k: string | null = box.container; k; k = byKey.get(k)!.parent) chain.push(byKey.get(k)!.kind);
    expect(chain).toEqual(['subnet', 'vpc', 'region', 'account']);
    checkGeometry(d);
    // Edges between boxes are drawn; containment edges are not.
    expect(d.edges).toHaveLength(graph.edges.length);
    expect(d.edges.filter((e) => e.points.length >= 2).length).toBeGreaterThan(graph.edges.length * 0.9);
  });

  it('hands elkjs at most elkMaxItems items per container and grids larger ones', async () => {
    const subnetOf = (count: number, linked: boolean): RenderGraph => {
      const nodes: GraphNode[] = Array.from({ length: count }, (_, i) => ({
        id: `n${i}`, name: `instance-${i}`, type: 'aws.ec2.instance', provider: 'aws', region: 'eu-west-1', account: '123456789012',
        nativeId: `i-${i}`, vpc: 'vpc-1', subnet: 'subnet-1', severity: null, findings: 0,
      }));
      const edges = linked ? nodes.slice(1).map((n, i) => ({ source: nodes[i]!.id, target: n.id, type: 'connects_to' })) : [];
      return { nodes, edges };
    };
    // 40 linked boxes: elkjs lays the subnet out; the containers above hold one item each (grid).
    const small = await layoutGraph(subnetOf(40, true), { elkMaxItems: 60 });
    expect(small.stats).toMatchObject({ elk_containers: 1, grid_containers: 3 });
    checkGeometry(small);
    // 2,000 linked boxes in one subnet never reach elkjs (one global layout would take seconds).
    const big = await layoutGraph(subnetOf(2000, true), { elkMaxItems: 60 });
    expect(big.stats).toMatchObject({ elk_containers: 0, grid_containers: 4 });
    checkGeometry(big);
  });

  it('cuts labels to fit their boxes with an ellipsis', async () => {
    const long = 'payments-ledger-primary-database-with-an-exceptionally-long-name-eu-west-1';
    const labels = boxLabels(long, 'aws.elasticloadbalancingv2.load_balancer', 'CRITICAL', 1200);
    const inner = BOX_W - STRIPE_W - 16;
    expect(labels.name.endsWith('…')).toBe(true);
    expect(textWidth(labels.name, NAME_FONT)).toBeLessThanOrEqual(inner);
    expect(textWidth(labels.type, TYPE_FONT)).toBeLessThanOrEqual(inner - 40);
    expect(labels.badge).toBe('C 999+');
    expect(boxLabels('web-1', 'aws.ec2.instance', null, 0)).toEqual({ name: 'web-1', type: 'aws.ec2.instance', badge: null });
    const d = await layoutGraph({ nodes: [{ id: 'x', name: long, type: 'aws.ec2.instance', provider: 'aws', region: 'us-east-1', account: null, nativeId: 'x', vpc: null, subnet: null, severity: 'LOW', findings: 2 }], edges: [] });
    const svg = [...svgChunks(d)].join('');
    expect(svg).not.toContain(long);
    expect(svg).toContain('L 2');
  });
});

describe('draw.io file', () => {
  it('is one mxfile diagram with nested containers, a style per node type, labels, badges and every edge', async () => {
    const graph = renderInput(300);
    const d = await layoutGraph(graph);
    const xml = [...drawioChunks(d, { generatedAt: '2026-01-01T00:00:00.000Z' })].join('');
    const parsed = parseDrawio(xml);
    expect(parsed.diagrams).toBe(1);
    const byId = new Map(parsed.cells.map((c) => [c.id, c]));
    const containers = parsed.cells.filter((c) => c.attrs.container_kind);
    expect(new Set(containers.map((c) => c.attrs.container_kind))).toEqual(new Set(['account', 'region', 'vpc', 'subnet']));
    for (const c of containers) expect(c.style).toMatch(/^swimlane;container=1;/);
    const nodes = parsed.cells.filter((c) => c.attrs.node_type);
    expect(nodes.length).toBe(d.boxes.length);
    // VPC and subnet nodes are their containers, with the node's data.
    expect(containers.filter((c) => c.attrs.resource_id).length + nodes.length).toBe(300);
    for (const n of nodes) {
      const category = CATEGORY_STYLE[categoryOf(n.attrs.node_type!)];
      expect(n.style).toContain(`fillColor=${category.fill};strokeColor=${category.stroke}`);
      expect(n.attrs.label).toContain(n.attrs.node_type!.slice(0, 10));
      expect(byId.get(n.parent!)!.attrs.container_kind).toBeDefined();
      // Inside the parent container's bounds (coordinates are relative to it).
      const parent = byId.get(n.parent!)!;
      expect(n.geometry.x! + n.geometry.width!).toBeLessThanOrEqual(parent.geometry.width!);
      expect(n.geometry.y! + n.geometry.height!).toBeLessThanOrEqual(parent.geometry.height!);
    }
    const db = nodes.find((n) => n.attrs.open_findings === '3')!;
    expect(db.attrs.severity).toBe('HIGH');
    const badge = parsed.cells.find((c) => c.parent === db.id && c.vertex)!;
    expect(badge).toBeDefined();
    expect(xml).toContain(`id="${badge.id}" value="H 3"`);
    const edges = parsed.cells.filter((c) => c.edge);
    expect(edges).toHaveLength(graph.edges.length);
    const resource = (cellId: string) => byId.get(cellId)!.attrs.resource_id;
    const wanted = new Set(graph.edges.map((e) => `${e.source}|${e.target}|${e.type}`));
    for (const e of edges) expect(wanted.has(`${resource(e.source!)}|${resource(e.target!)}|${e.attrs.edge_type}`)).toBe(true);
  });

  it('escapes names that are not safe in XML', async () => {
    const d = await layoutGraph({ nodes: [{ id: 'a', name: '<script>&"\'\u0001', type: 'aws.s3.bucket', provider: 'aws', region: 'us-east-1', account: '1', nativeId: 'a', vpc: null, subnet: null, severity: null, findings: 0 }], edges: [] });
    const parsed = parseDrawio([...drawioChunks(d)].join(''));
    expect(parsed.cells.find((c) => c.attrs.name)!.attrs.name).toBe('<script>&"\'');
  });
});

describe('PNG', () => {
  it('renders a PNG at 1.5x, and scales a huge diagram down to the pixel budget', async () => {
    const chunks: Buffer[] = [];
    const { stats } = await renderGraph(renderInput(60), 'png', (c) => void chunks.push(Buffer.from(c)));
    const png = Buffer.concat(chunks);
    expect(pngSize(png)).toEqual({ width: Math.round(stats.width * 1.5), height: Math.round(stats.height * 1.5) });
    const scale = pngScale(21_000, 20_000);
    expect(21_000 * scale * 20_000 * scale).toBeLessThanOrEqual(MAX_PNG_PIXELS);
    expect(pngScale(100_000, 300)).toBeCloseTo(0.16, 2);
  });
});
