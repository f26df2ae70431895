import type ElkModule from 'elkjs/lib/elk.bundled.js';
import { buildContainers, type Container, type GraphEdge, type GraphNode, type RenderGraph } from './model.js';
import { BOX_GAP_X, BOX_GAP_Y, BOX_H, BOX_W, HEADER_H, PAD, TITLE_FONT, badgeText, badgeWidth, textWidth } from './style.js';

// A CommonJS module whose typings declare an ES default export: at run time the import is the constructor.
type ElkConstructor = typeof ElkModule.default;
type Elk = InstanceType<ElkConstructor>;

let elkConstructor: Promise<ElkConstructor> | null = null;
/** elkjs takes about 0.3 s to load: only a process (or render thread) that lays out a diagram pays for it. */
function loadElk(): Promise<ElkConstructor> {
  elkConstructor ??= import('elkjs/lib/elk.bundled.js').then((m) => m.default as unknown as ElkConstructor);
  return elkConstructor;
}

export interface PlacedBox {
  node: GraphNode;
  container: string;
  x: number;
  y: number;
}

export interface PlacedContainer {
  container: Container;
  depth: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface PlacedEdge {
  edge: GraphEdge;
  /** Absolute polyline; empty for a containment edge (one end inside the other's container). */
  points: Array<[number, number]>;
}

export interface Diagram {
  width: number;
  height: number;
  containers: PlacedContainer[];
  boxes: PlacedBox[];
  edges: PlacedEdge[];
  stats: { elk_containers: number; grid_containers: number; layout_ms: number };
}

export interface LayoutOptions {
  /** Containers with more direct items than this are laid out as a grid instead of with elkjs. */
  elkMaxItems?: number;
}

/** Gap between the diagram and the image border. */
export const MARGIN = 20;
const CONTAINER_GAP = 24;
const MAX_TITLE_W = 460;

interface Item {
  key: string;
  w: number;
  h: number;
}

interface Local {
  w: number;
  h: number;
  /** Positions of direct items relative to the content origin. */
  at: Map<string, { x: number; y: number }>;
  /** Routes of edges between direct boxes, relative to the content origin (by edge index). */
  routes: Map<number, Array<[number, number]>>;
}

/**
 * Lays out the graph container by container, bottom up: each container's direct items (boxes and
 * already laid out child containers) are placed with elkjs (layered) when they are few and
 * connected, else in a grid; the container's size follows. elkjs is synchronous and superlinear, so
 * no call ever sees more than `elkMaxItems` nodes, whatever the size of the graph.
 */
export async function layoutGraph(graph: RenderGraph, options: LayoutOptions = {}): Promise<Diagram> {
  const started = Date.now();
  const elkMax = options.elkMaxItems ?? 60;
  const { containers, roots, nodeContainer } = buildContainers(graph);
  const boxOwner = new Map<string, string>();
  for (const c of containers.values()) for (const b of c.boxes) boxOwner.set(b.id, c.key);

  // The anchor of a node: its box, or the container it stands for. Chains go from the anchor up.
  const parentOf = (anchor: string): string | null => {
    const c = containers.get(anchor);
    if (c) return c.parent;
    return boxOwner.get(anchor) ?? null;
  };
  const anchorOf = (nodeId: string): string | null => nodeContainer.get(nodeId) ?? (boxOwner.has(nodeId) ? nodeId : null);
  const chain = (anchor: string): string[] => {
    const out = [anchor];
    for (let p = parentOf(anchor); p; p = parentOf(p)) out.push(p);
    return out;
  };

  // Each edge is lifted to the lowest container holding both ends, between the two direct items there.
  const lifted = new Map<string, Array<{ a: string; b: string; index: number }>>();
  const containment = new Set<number>();
  graph.edges.forEach((edge, index) => {
    const sa = anchorOf(edge.source);
    const ta = anchorOf(edge.target);
    if (!sa || !ta || sa === ta) {
      containment.add(index);
      return;
    }
    const ca = chain(sa);
    const ct = chain(ta);
    const setT = new Set(ct);
    const lcaIndex = ca.findIndex((k) => setT.has(k));
    if (lcaIndex <= 0 || ct.indexOf(ca[lcaIndex]!) === 0) {
      // One end contains the other (or they share no root: accounts side by side).
      if (lcaIndex === 0 || ct.indexOf(ca[lcaIndex]!) === 0) containment.add(index);
      return;
    }
    const lca = ca[lcaIndex]!;
    const a = ca[lcaIndex - 1]!;
    const b = ct[ct.indexOf(lca) - 1]!;
    if (a === b) return;
    let list = lifted.get(lca);
    if (!list) lifted.set(lca, (list = []));
    list.push({ a, b, index });
  });

  const elk = new (await loadElk())();
  const local = new Map<string, Local>();
  const stats = { elk_containers: 0, grid_containers: 0, layout_ms: 0 };

  const sizeOf = (key: string): Item => {
    const l = local.get(key);
    return l ? { key, w: l.w, h: l.h } : { key, w: BOX_W, h: BOX_H };
  };

  // Post-order: children before parents.
  const order: string[] = [];
  const visit = (key: string) => {
    for (const child of containers.get(key)!.children) visit(child);
    order.push(key);
  };
  for (const r of roots) visit(r);

  for (const key of order) {
    const c = containers.get(key)!;
    const childItems = c.children.map(sizeOf);
    const boxes = [...c.boxes].sort((x, y) => x.type.localeCompare(y.type) || x.name.localeCompare(y.name) || x.id.localeCompare(y.id));
    const edges = lifted.get(key) ?? [];
    const count = childItems.length + boxes.length;
    let content: Omit<Local, 'w' | 'h'> & { cw: number; ch: number };
    if (count > 1 && count <= elkMax && edges.length > 0) {
      content = await elkLayout(elk, [...childItems, ...boxes.map((b) => ({ key: b.id, w: BOX_W, h: BOX_H }))], edges, c);
      stats.elk_containers++;
    } else {
      content = gridLayout(childItems, boxes.map((b) => b.id));
      stats.grid_containers++;
    }
    const title = titleWidth(c);
    const w = Math.max(content.cw + 2 * PAD, Math.min(title, MAX_TITLE_W), BOX_W / 2);
    const h = HEADER_H + PAD + Math.max(content.ch, 8) + PAD;
    // Centre narrow content under a wide title.
    const shift = (w - 2 * PAD - content.cw) / 2;
    if (shift > 0) {
      for (const p of content.at.values()) p.x += shift;
      for (const r of content.routes.values()) for (const pt of r) pt[0] += shift;
    }
    local.set(key, { w, h, at: content.at, routes: content.routes });
  }

  // Roots (accounts) side by side, wrapped into rows.
  const rootPack = shelfPack(roots.map(sizeOf), CONTAINER_GAP, CONTAINER_GAP);
  const placedContainers: PlacedContainer[] = [];
  const placedBoxes: PlacedBox[] = [];
  const absolute = new Map<string, { x: number; y: number; w: number; h: number }>();
  const place = (key: string, x: number, y: number, depth: number) => {
    const c = containers.get(key)!;
    const l = local.get(key)!;
    placedContainers.push({ container: c, depth, x, y, w: l.w, h: l.h });
    absolute.set(key, { x, y, w: l.w, h: l.h });
    const ox = x + PAD;
    const oy = y + HEADER_H + PAD;
    for (const b of c.boxes) {
      const p = l.at.get(b.id)!;
      placedBoxes.push({ node: b, container: key, x: ox + p.x, y: oy + p.y });
      absolute.set(b.id, { x: ox + p.x, y: oy + p.y, w: BOX_W, h: BOX_H });
    }
    for (const child of c.children) {
      const p = l.at.get(child)!;
      place(child, ox + p.x, oy + p.y, depth + 1);
    }
  };
  for (const r of roots) {
    const p = rootPack.at.get(r)!;
    place(r, MARGIN + p.x, MARGIN + p.y, 0);
  }

  const routeOf = new Map<number, Array<[number, number]>>();
  for (const [key, l] of local) {
    const abs = absolute.get(key)!;
    for (const [index, points] of l.routes) routeOf.set(index, points.map(([px, py]) => [abs.x + PAD + px, abs.y + HEADER_H + PAD + py]));
  }
  const centre = (anchor: string): [number, number] => {
    const r = absolute.get(anchor)!;
    // A container stands for its node at its header.
    return containers.has(anchor) ? [r.x + Math.min(r.w / 2, 120), r.y + HEADER_H / 2] : [r.x + r.w / 2, r.y + r.h / 2];
  };
  const placedEdges: PlacedEdge[] = graph.edges.map((edge, index) => {
    if (containment.has(index)) return { edge, points: [] };
    const route = routeOf.get(index);
    if (route) return { edge, points: route };
    const sa = anchorOf(edge.source);
    const ta = anchorOf(edge.target);
    if (!sa || !ta) return { edge, points: [] };
    return { edge, points: clipLine(absolute.get(sa)!, absolute.get(ta)!, centre(sa), centre(ta), containers.has(sa), containers.has(ta)) };
  });

  stats.layout_ms = Date.now() - started;
  return {
    width: Math.ceil(rootPack.cw + 2 * MARGIN),
    height: Math.ceil(rootPack.ch + 2 * MARGIN),
    containers: placedContainers,
    boxes: placedBoxes,
    edges: placedEdges,
    stats,
  };
}

function titleWidth(c: Container): number {
  const badge = c.severity ? badgeWidth(badgeText(c.severity, c.findings)) + 8 : 0;
  return Math.ceil(textWidth(c.label, TITLE_FONT)) + 20 + badge;
}

/** Straight line between two anchors, cut at the borders of boxes (not of containers). */
function clipLine(
  ra: { x: number; y: number; w: number; h: number },
  rb: { x: number; y: number; w: number; h: number },
  a: [number, number],
  b: [number, number],
  aIsContainer: boolean,
  bIsContainer: boolean,
): Array<[number, number]> {
  const cut = (r: typeof ra, from: [number, number], to: [number, number]): [number, number] => {
    const dx = to[0] - from[0];
    const dy = to[1] - from[1];
    const tx = dx === 0 ? Infinity : r.w / 2 / Math.abs(dx);
    const ty = dy === 0 ? Infinity : r.h / 2 / Math.abs(dy);
    const t = Math.min(tx, ty, 1);
    return [from[0] + dx * t, from[1] + dy * t];
  };
  return [aIsContainer ? a : cut(ra, a, b), bIsContainer ? b : cut(rb, b, a)];
}

/** Rows of items left to right, wrapped at a width that keeps the block roughly 1.6 times wider than high. */
export function shelfPack(items: Item[], gapX: number, gapY: number, minWidth = 0) {
  const at = new Map<string, { x: number; y: number }>();
  if (items.length === 0) return { at, cw: 0, ch: 0 };
  const area = items.reduce((s, i) => s + (i.w + gapX) * (i.h + gapY), 0);
  const widest = Math.max(...items.map((i) => i.w));
  const target = Math.max(widest, minWidth, Math.sqrt(area * 1.6));
  const sorted = [...items].sort((p, q) => q.h - p.h || p.key.localeCompare(q.key));
  let x = 0;
  let y = 0;
  let rowH = 0;
  let cw = 0;
  for (const item of sorted) {
    if (x > 0 && x + item.w > target) {
      y += rowH + gapY;
      x = 0;
      rowH = 0;
    }
    at.set(item.key, { x, y });
    x += item.w + gapX;
    rowH = Math.max(rowH, item.h);
    cw = Math.max(cw, x - gapX);
  }
  return { at, cw, ch: y + rowH };
}

/** Child containers packed in rows, then the boxes in a grid below them (in type and name order). */
function gridLayout(childItems: Item[], boxIds: string[]) {
  const packed = shelfPack(childItems, CONTAINER_GAP, CONTAINER_GAP);
  const at = packed.at;
  let cw = packed.cw;
  let ch = packed.ch;
  if (boxIds.length) {
    const cellW = BOX_W + BOX_GAP_X;
    const cellH = BOX_H + BOX_GAP_Y;
    let cols = Math.max(1, Math.round(Math.sqrt((1.6 * boxIds.length * cellH) / cellW)));
    cols = Math.max(cols, Math.floor((packed.cw + BOX_GAP_X) / cellW));
    cols = Math.min(cols, boxIds.length);
    const top = packed.ch > 0 ? packed.ch + CONTAINER_GAP : 0;
    boxIds.forEach((id, i) => at.set(id, { x: (i % cols) * cellW, y: top + Math.floor(i / cols) * cellH }));
    const rows = Math.ceil(boxIds.length / cols);
    cw = Math.max(cw, cols * cellW - BOX_GAP_X);
    ch = top + rows * cellH - BOX_GAP_Y;
  }
  return { at, routes: new Map<number, Array<[number, number]>>(), cw, ch };
}

interface ElkPoint {
  x: number;
  y: number;
}
interface ElkSection {
  startPoint: ElkPoint;
  endPoint: ElkPoint;
  bendPoints?: ElkPoint[];
}
interface ElkResult {
  width?: number;
  height?: number;
  children?: Array<{ id: string; x?: number; y?: number }>;
  edges?: Array<{ id: string; sections?: ElkSection[] }>;
}

async function elkLayout(elk: Elk, items: Item[], edges: Array<{ a: string; b: string; index: number }>, c: Container) {
  const boxes = new Set(c.boxes.map((b) => b.id));
  // One ELK edge per pair of items; routes are kept for edges between two boxes.
  const pairs = new Map<string, { a: string; b: string; indexes: number[] }>();
  for (const e of edges) {
    const k = `${e.a}\u0000${e.b}`;
    const p = pairs.get(k) ?? { a: e.a, b: e.b, indexes: [] };
    p.indexes.push(e.index);
    pairs.set(k, p);
  }
  const pairList = [...pairs.values()];
  const result = (await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.padding': '[top=0,left=0,bottom=0,right=0]',
      'elk.spacing.nodeNode': String(BOX_GAP_Y),
      'elk.layered.spacing.nodeNodeBetweenLayers': '48',
      'elk.spacing.componentComponent': String(CONTAINER_GAP),
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.separateConnectedComponents': 'true',
      'elk.aspectRatio': '1.6',
      'elk.layered.thoroughness': '1',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
    },
    children: items.map((i) => ({ id: i.key, width: i.w, height: i.h })),
    edges: pairList.map((p, i) => ({ id: `e${i}`, sources: [p.a], targets: [p.b] })),
  })) as ElkResult;
  const at = new Map<string, { x: number; y: number }>();
  for (const child of result.children ?? []) at.set(child.id, { x: child.x ?? 0, y: child.y ?? 0 });
  const routes = new Map<number, Array<[number, number]>>();
  for (const edge of result.edges ?? []) {
    const pair = pairList[Number(edge.id.slice(1))]!;
    if (!boxes.has(pair.a) || !boxes.has(pair.b)) continue;
    const s = edge.sections?.[0];
    if (!s) continue;
    const points: Array<[number, number]> = [[s.startPoint.x, s.startPoint.y], ...(s.bendPoints ?? []).map((p): [number, number] => [p.x, p.y]), [s.endPoint.x, s.endPoint.y]];
    for (const index of pair.indexes) routes.set(index, points.map(([x, y]) => [x, y]));
  }
  let cw = 0;
  let ch = 0;
  for (const i of items) {
    const p = at.get(i.key)!;
    cw = Math.max(cw, p.x + i.w);
    ch = Math.max(ch, p.y + i.h);
  }
  return { at, routes, cw, ch };
}
