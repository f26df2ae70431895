import { shapeOf, type AwsShape } from './aws-shapes.js';
import { shelfPack, MARGIN } from './layout.js';
import { buildContainers, type RenderGraph } from './model.js';
import { svgContainer, svgIcon, FONT } from './svg.js';
import {
  HEADER_H,
  PAD,
  SEVERITIES,
  SEVERITY_STYLE,
  TITLE_FONT,
  badgeText,
  badgeWidth,
  containerLook,
  escapeXml,
  fitText,
  textWidth,
  type ContainerKind,
  type ContainerLook,
  type Severity,
} from './style.js';

/**
 * The overview of a large graph, for the PNG: accounts, regions and VPCs (subnets folded into their
 * VPC), each with how many nodes of each type it holds and their worst open finding. Edges are not
 * drawn; the draw.io file (and the SVG) keep every node and edge.
 */
export interface OverviewRow {
  type: string;
  label: string;
  shape: AwsShape;
  count: number;
  severity: Severity | null;
  findings: number;
}

export interface OverviewGroup {
  key: string;
  kind: ContainerKind;
  look: ContainerLook;
  label: string;
  parent: string | null;
  children: string[];
  rows: OverviewRow[];
  /** Nodes in the group and the groups inside it. */
  total: number;
  severity: Severity | null;
  findings: number;
}

export interface Overview {
  groups: Map<string, OverviewGroup>;
  roots: string[];
  nodes: number;
  edges: number;
}

const worse = (a: Severity | null, b: Severity | null): Severity | null => (a === null ? b : b === null ? a : SEVERITIES.indexOf(a) <= SEVERITIES.indexOf(b) ? a : b);

/** Groups the graph with the same placement rules as the full diagram, then folds subnets into their VPC. */
export function buildOverview(graph: RenderGraph): Overview {
  const { containers, roots } = buildContainers(graph);
  const groups = new Map<string, OverviewGroup>();
  // The group a container folds into: itself, or for a subnet its nearest non-subnet ancestor.
  const home = (key: string): string => {
    let k = key;
    while (containers.get(k)!.kind === 'subnet' && containers.get(k)!.parent) k = containers.get(k)!.parent!;
    return k;
  };
  for (const c of containers.values()) {
    if (home(c.key) !== c.key) continue;
    groups.set(c.key, {
      key: c.key,
      kind: c.kind,
      look: containerLook(c.kind, c.variant),
      label: c.label,
      parent: c.parent ? home(c.parent) : null,
      children: [],
      rows: [],
      total: 0,
      severity: null,
      findings: 0,
    });
  }
  for (const g of groups.values()) if (g.parent) groups.get(g.parent)!.children.push(g.key);
  const rowsByGroup = new Map<string, Map<string, OverviewRow>>();
  const count = (groupKey: string, type: string, variant: string | null | undefined, severity: Severity | null, findings: number) => {
    let rows = rowsByGroup.get(groupKey);
    if (!rows) rowsByGroup.set(groupKey, (rows = new Map()));
    const shape = shapeOf(type, variant);
    const rowKey = `${type}|${shape.label}`;
    const row = rows.get(rowKey) ?? { type, label: shape.label, shape, count: 0, severity: null, findings: 0 };
    row.count++;
    row.severity = worse(row.severity, severity);
    row.findings += findings;
    rows.set(rowKey, row);
    for (let k: string | null = groupKey; k; k = groups.get(k)!.parent) {
      const g = groups.get(k)!;
      g.total++;
      g.severity = worse(g.severity, severity);
      g.findings += findings;
    }
  };
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  for (const c of containers.values()) {
    const g = home(c.key);
    if (c.nodeId) {
      const n = byId.get(c.nodeId)!;
      count(g, n.type, n.variant, n.severity, n.findings);
    }
    for (const b of c.boxes) count(g, b.type, b.variant, b.severity, b.findings);
  }
  // The same order in every group, so groups compare at a glance.
  for (const [key, rows] of rowsByGroup) groups.get(key)!.rows = [...rows.values()].sort((a, b) => a.label.localeCompare(b.label) || a.type.localeCompare(b.type));
  return { groups, roots: roots.filter((r) => groups.has(r)), nodes: graph.nodes.length, edges: graph.edges.length };
}

const CHIP_W = 76;
const CHIP_H = 24;
const CHIP_ICON = 18;
const MIN_CHIPS = 3;
const GAP = 16;
const BANNER_H = 24;
const LEGEND_W = 200;
const LEGEND_H = 22;

interface Box {
  w: number;
  h: number;
  at: Map<string, { x: number; y: number }>;
  cols: number;
}

export interface OverviewLayout {
  overview: Overview;
  width: number;
  height: number;
  placed: Array<{ group: OverviewGroup; x: number; y: number; w: number; h: number; depth: number; cols: number }>;
  /** The types drawn, with their icon, as a key above the groups. */
  legend: Array<{ label: string; shape: AwsShape; x: number; y: number }>;
}

/**
 * Groups packed in rows inside their parent; below a group's children, one chip per type (its icon
 * and count), as many per row as the group is wide. A key of the icons heads the image.
 */
export function layoutOverview(overview: Overview): OverviewLayout {
  const boxes = new Map<string, Box>();
  const size = (key: string): Box => {
    const g = overview.groups.get(key)!;
    const children = g.children.map((k) => ({ key: k, box: size(k) }));
    const packed = shelfPack(
      children.map((c) => ({ key: c.key, w: c.box.w, h: c.box.h })),
      GAP,
      GAP,
    );
    const title = textWidth(titleOf(g), TITLE_FONT) + 48 + (g.severity ? badgeWidth(badgeText(g.severity, g.findings)) + 8 : 0);
    const inner = Math.max(packed.cw, Math.min(g.rows.length, MIN_CHIPS) * CHIP_W, Math.min(title, 520) - 2 * PAD, 150);
    const cols = Math.max(1, Math.floor(inner / CHIP_W));
    const chipsH = Math.ceil(g.rows.length / cols) * CHIP_H;
    const h = HEADER_H + PAD + packed.ch + (packed.ch > 0 && chipsH ? GAP : 0) + chipsH + PAD;
    const box = { w: inner + 2 * PAD, h, at: packed.at, cols };
    boxes.set(key, box);
    return box;
  };
  const top = shelfPack(
    overview.roots.map((k) => ({ key: k, w: size(k).w, h: size(k).h })),
    GAP,
    GAP,
  );
  const width = Math.ceil(Math.max(top.cw, textWidth(bannerText(overview), 13) + 20, 4 * LEGEND_W) + 2 * MARGIN);
  // The key: every type drawn, once, in rows across the image.
  const shapes = new Map<string, AwsShape>();
  for (const g of overview.groups.values()) for (const r of g.rows) shapes.set(r.label, r.shape);
  const perRow = Math.max(1, Math.floor((width - 2 * MARGIN) / LEGEND_W));
  const legend = [...shapes]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([label, shape], i) => ({
      label,
      shape,
      x: MARGIN + (i % perRow) * LEGEND_W,
      y: MARGIN + BANNER_H + Math.floor(i / perRow) * LEGEND_H,
    }));
  const legendH = Math.ceil(legend.length / perRow) * LEGEND_H + GAP;
  const placed: OverviewLayout['placed'] = [];
  const place = (key: string, x: number, y: number, depth: number) => {
    const b = boxes.get(key)!;
    placed.push({ group: overview.groups.get(key)!, x, y, w: b.w, h: b.h, depth, cols: b.cols });
    for (const child of overview.groups.get(key)!.children) {
      const p = b.at.get(child)!;
      place(child, x + PAD + p.x, y + HEADER_H + PAD + p.y, depth + 1);
    }
  };
  for (const r of overview.roots) {
    const p = top.at.get(r)!;
    place(r, MARGIN + p.x, MARGIN + BANNER_H + legendH + p.y, 0);
  }
  return { overview, width, height: Math.ceil(top.ch + BANNER_H + legendH + 2 * MARGIN), placed, legend };
}

function titleOf(g: OverviewGroup): string {
  return `${g.label} · ${g.total.toLocaleString('en-US')} node${g.total === 1 ? '' : 's'}`;
}

function bannerText(o: Overview): string {
  return `Overview of ${o.nodes.toLocaleString('en-US')} nodes and ${o.edges.toLocaleString('en-US')} edges: nodes of each type per account, region and VPC (every node and edge is in the draw.io and SVG exports)`;
}

/** The overview as SVG, containers outermost first; a type's chip carries a dot of its worst open finding. */
export function* overviewSvgChunks(l: OverviewLayout): Generator<string> {
  const r = (v: number) => Math.round(v * 10) / 10;
  yield `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${l.width}" height="${l.height}" viewBox="0 0 ${l.width} ${l.height}" font-family="${FONT}">\n`;
  yield `<rect width="100%" height="100%" fill="#ffffff"/>\n`;
  yield `<text x="${MARGIN}" y="${MARGIN + 13}" font-size="13" font-weight="bold" fill="#232F3E">${escapeXml(bannerText(l.overview))}</text>\n`;
  for (const k of l.legend) {
    yield `${svgIcon(k.x, k.y, CHIP_ICON, k.shape)}<text x="${r(k.x + CHIP_ICON + 6)}" y="${r(k.y + 13)}" font-size="11" fill="#232F3E">${escapeXml(fitText(k.label, 11, LEGEND_W - CHIP_ICON - 12))}</text>\n`;
  }
  for (const p of [...l.placed].sort((a, b) => a.depth - b.depth)) {
    const g = p.group;
    let out = svgContainer(p, g.look, titleOf(g), g.severity, g.findings);
    const top = p.y + p.h - PAD - Math.ceil(g.rows.length / p.cols) * CHIP_H;
    g.rows.forEach((row, i) => {
      const x = p.x + PAD + (i % p.cols) * CHIP_W;
      const y = top + Math.floor(i / p.cols) * CHIP_H;
      out +=
        svgIcon(x, y, CHIP_ICON, row.shape) +
        `<text x="${r(x + CHIP_ICON + 5)}" y="${r(y + 13)}" font-size="11" font-weight="bold" fill="#232F3E">${escapeXml(fitText(`×${row.count.toLocaleString('en-US')}`, 11, CHIP_W - CHIP_ICON - 8))}</text>`;
      if (row.severity) out += `<circle cx="${r(x + CHIP_ICON - 1)}" cy="${r(y + 1)}" r="4" fill="${SEVERITY_STYLE[row.severity].fill}" stroke="#ffffff" stroke-width="1"/>`;
    });
    yield out + '\n';
  }
  yield '</svg>\n';
}
