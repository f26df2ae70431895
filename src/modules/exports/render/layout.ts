import type ElkModule from 'elkjs/lib/elk.bundled.js';
import { buildContainers, type Container, type GraphEdge, type GraphNode, type RenderGraph } from './model.js';
import { EDGE_FONT, HEADER_H, ICON, ICON_X, ITEM_GAP_X, ITEM_GAP_Y, ITEM_H, ITEM_W, PAD, TITLE_FONT, badgeText, badgeWidth, edgeLabel, textWidth } from './style.js';

// A CommonJS module whose typings declare an ES default export: at run time the import is the constructor.
type ElkConstructor = typeof ElkModule.default;
type Elk = InstanceType<ElkConstructor>;

let elkConstructor: Promise<ElkConstructor> | null = null;
/** elkjs takes about 0.3 s to load: only a process (or render thread) that lays out a diagram pays for it. */
function loadElk(): Promise<ElkConstructor> {
  elkConstructor ??= import('elkjs/lib/elk.bundled.js').then((m) => m.default as unknown as ElkConstructor);
  return elkConstructor;
}

type Point = [number, number];

export interface PlacedBox {
  node: GraphNode;
  container: string;
  /** Top-left corner of the node's item (icon at the top, centred; labels below). */
  x: number;
  y: number;
  /** Set when the node is drawn in another account's container: its own account. */
  note: string | null;
}

export interface PlacedContainer {
  container: Container;
  depth: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface EdgeLabel {
  text: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface PlacedEdge {
  /** The graph edges this line stands for: same two ends, same direction (their types differ). */
  edges: GraphEdge[];
  source: string;
  target: string;
  /** Absolute polyline from the source's icon (or container header) to the target's, arrow at the end. */
  points: Point[];
  /** True when every piece of the line is elkjs's orthogonal route; false for a straight fallback. */
  routed: boolean;
  label: EdgeLabel | null;
}

export interface Diagram {
  width: number;
  height: number;
  containers: PlacedContainer[];
  boxes: PlacedBox[];
  edges: PlacedEdge[];
  /** Edges between a node and a container holding it (shown by nesting) or with an end not in the graph. */
  dropped: { containment: number; dangling: number };
  stats: { elk_containers: number; grid_containers: number; single_containers: number; layout_ms: number; routed_edges: number; straight_edges: number };
}

export interface LayoutOptions {
  /** Containers with more direct items than this are laid out as a grid instead of with elkjs. */
  elkMaxItems?: number;
}

/** Gap between the diagram and the image border. */
export const MARGIN = 20;
const CONTAINER_GAP = 24;
const MAX_TITLE_W = 460;
/** Containers with more edge pieces than this are laid out as a grid (elkjs time grows with edges too). */
const MAX_ELK_SEGMENTS = 400;
/** The diagram itself: the container of the accounts (no frame, no header). */
const ROOT = '';

interface Item {
  key: string;
  w: number;
  h: number;
}

/** One piece of a line inside one container: between two of its items, or an item and its border. */
interface Segment {
  key: string;
  from: string;
  to: string;
}

interface Local {
  w: number;
  h: number;
  /** Positions of direct items relative to the container's top-left corner. */
  at: Map<string, { x: number; y: number }>;
  /** Routes of this container's segments, relative to its top-left corner. */
  routes: Map<string, Point[]>;
  /** Where the container's border ports are, relative to its top-left corner. */
  ports: Map<string, Point>;
}

// Port ids. A box has one port on each side at its icon's height; a container standing for a node
// has one on each side of its header; a container an edge passes through has one per inner item and
// direction, on its east (outgoing) or west (incoming) border.
const boxPort = (id: string, side: 'W' | 'E') => `${id}|${side}`;
const headerPort = (key: string, side: 'W' | 'E') => `${key}|H${side}`;
const borderPort = (key: string, dir: 'o' | 'i', inner: string) => `${key}|${dir}|${inner}`;

/**
 * Lays out the graph container by container, bottom up: each container's direct items (boxes and
 * already laid out child containers) are placed with elkjs (layered, orthogonal edges) when they
 * are few and linked, else in a grid; the container's size follows. No elkjs call ever sees more
 * than `elkMaxItems` items, whatever the size of the graph.
 *
 * Edges follow elkjs's routes across containers: an edge between nodes in different containers is
 * cut into pieces, one per container it crosses (item to border port, border port to border port at
 * the lowest common container, border port to item), each routed by that container's own layout;
 * the ports of a laid-out container are fixed where its layout put them when its parent is laid out,
 * so the pieces join. An edge one of whose pieces falls in a grid is drawn straight.
 */
// eslint-disable-next-line max-lines-per-function -- one algorithm over shared local state; not split in time (issue 26 follow-up)
export async function layoutGraph(graph: RenderGraph, options: LayoutOptions = {}): Promise<Diagram> {
  const started = Date.now();
  const elkMax = options.elkMaxItems ?? 60;
  const { containers, roots, nodeContainer } = buildContainers(graph);
  const boxOwner = new Map<string, string>();
  for (const c of containers.values()) for (const b of c.boxes) boxOwner.set(b.id, c.key);
  const childrenOf = (key: string) => (key === ROOT ? roots : containers.get(key)!.children);

  // The anchor of a node: its box, or the container it stands for. Chains go from the anchor up to ROOT.
  const parentOf = (anchor: string): string | null => {
    if (anchor === ROOT) return null;
    const c = containers.get(anchor);
    if (c) return c.parent ?? ROOT;
    return boxOwner.get(anchor) ?? null;
  };
  const anchorOf = (nodeId: string): string | null => nodeContainer.get(nodeId) ?? (boxOwner.has(nodeId) ? nodeId : null);
  const chain = (anchor: string): string[] => {
    const out = [anchor];
    for (let p = parentOf(anchor); p !== null; p = parentOf(p)) out.push(p);
    return out;
  };

  // Lines: the graph's edges grouped by their two anchors, without the ones nesting already shows.
  const dropped = { containment: 0, dangling: 0 };
  const links = new Map<string, { source: string; target: string; sa: string; ta: string; edges: GraphEdge[] }>();
  for (const edge of graph.edges) {
    const sa = anchorOf(edge.source);
    const ta = anchorOf(edge.target);
    if (!sa || !ta) {
      dropped.dangling++;
      continue;
    }
    if (sa === ta || chain(sa).includes(ta) || chain(ta).includes(sa)) {
      dropped.containment++;
      continue;
    }
    const key = `${sa}\u0000${ta}`;
    const link = links.get(key) ?? { source: edge.source, target: edge.target, sa, ta, edges: [] };
    link.edges.push(edge);
    links.set(key, link);
  }

  // Each line's pieces, container by container.
  const segments = new Map<string, Map<string, Segment>>();
  const outPorts = new Map<string, Set<string>>();
  const inPorts = new Map<string, Set<string>>();
  const addPort = (registry: Map<string, Set<string>>, key: string, port: string) => {
    const set = registry.get(key) ?? new Set<string>();
    set.add(port);
    registry.set(key, set);
  };
  const addSegment = (container: string, from: string, to: string): { container: string; key: string } => {
    const key = `${from}>${to}`;
    let inside = segments.get(container);
    if (!inside) segments.set(container, (inside = new Map()));
    inside.set(key, inside.get(key) ?? { key, from, to });
    return { container, key };
  };
  const lineSegments = new Map<string, Array<{ container: string; key: string }>>();
  for (const [linkKey, link] of links) {
    const ca = chain(link.sa);
    const ct = chain(link.ta);
    const inTarget = new Set(ct);
    const i = ca.findIndex((k) => inTarget.has(k));
    const lca = ca[i]!;
    const j = ct.indexOf(lca);
    // The endpoint of the line in container ca[k] (source side) or ct[k] (target side).
    const srcEnd = (k: number) => (k === 0 ? (containers.has(link.sa) ? headerPort(link.sa, 'E') : boxPort(link.sa, 'E')) : borderPort(ca[k]!, 'o', ca[k - 1]!));
    const tgtEnd = (k: number) => (k === 0 ? (containers.has(link.ta) ? headerPort(link.ta, 'W') : boxPort(link.ta, 'W')) : borderPort(ct[k]!, 'i', ct[k - 1]!));
    const pieces: Array<{ container: string; key: string }> = [];
    for (let k = 1; k < i; k++) {
      addPort(outPorts, ca[k]!, srcEnd(k));
      pieces.push(addSegment(ca[k]!, srcEnd(k - 1), srcEnd(k)));
    }
    pieces.push(addSegment(lca, srcEnd(i - 1), tgtEnd(j - 1)));
    for (let k = j - 1; k >= 1; k--) {
      addPort(inPorts, ct[k]!, tgtEnd(k));
      pieces.push(addSegment(ct[k]!, tgtEnd(k), tgtEnd(k - 1)));
    }
    lineSegments.set(linkKey, pieces);
  }

  const elk = new (await loadElk())();
  const local = new Map<string, Local>();
  const stats = { elk_containers: 0, grid_containers: 0, single_containers: 0, layout_ms: 0, routed_edges: 0, straight_edges: 0 };

  // Post-order: children before parents, the diagram itself last.
  const order: string[] = [];
  const visit = (key: string) => {
    for (const child of childrenOf(key)) visit(child);
    order.push(key);
  };
  visit(ROOT);

  for (const key of order) {
    const isRoot = key === ROOT;
    const c = isRoot ? null : containers.get(key)!;
    const childKeys = childrenOf(key);
    const boxes = c ? [...c.boxes].sort((x, y) => x.type.localeCompare(y.type) || x.name.localeCompare(y.name) || x.id.localeCompare(y.id)) : [];
    const segs = [...(segments.get(key)?.values() ?? [])];
    const count = childKeys.length + boxes.length;
    const top = isRoot ? 0 : HEADER_H + PAD;
    const side = isRoot ? 0 : PAD;
    let content: Content;
    if (count === 1 && segs.length > 0 && !isRoot) {
      // One item, lines only passing through: straight across, no elkjs call needed.
      const only = childKeys[0] ? { key: childKeys[0], local: local.get(childKeys[0])! } : null;
      content = singleItem(key, only ?? { key: boxes[0]!.id, local: null }, segs);
      stats.single_containers++;
    } else if (count >= 1 && segs.length > 0 && count <= elkMax && segs.length <= MAX_ELK_SEGMENTS) {
      content = await elkLayout(
        elk,
        key,
        childKeys.map((k) => ({ key: k, local: local.get(k)! })),
        boxes.map((b) => b.id),
        segs,
        outPorts.get(key),
        inPorts.get(key),
      );
      stats.elk_containers++;
    } else {
      content = gridLayout(
        childKeys.map((k) => ({ key: k, w: local.get(k)!.w, h: local.get(k)!.h })),
        boxes.map((b) => b.id),
        isRoot,
      );
      stats.grid_containers++;
    }
    const title = c ? titleWidth(c) : 0;
    const w = isRoot ? content.cw : Math.max(content.cw + 2 * side, Math.min(title, MAX_TITLE_W), ITEM_W / 2);
    const h = isRoot ? content.ch : top + Math.max(content.ch, 8) + PAD;
    // Centre narrow content under a wide title.
    const shift = Math.max(0, (w - 2 * side - content.cw) / 2);
    const ox = side + shift;
    const at = new Map<string, { x: number; y: number }>();
    for (const [k, p] of content.at) at.set(k, { x: ox + p.x, y: top + p.y });
    const move = (p: Point): Point => [ox + p[0], top + p[1]];
    const routes = new Map<string, Point[]>();
    for (const [k, r] of content.routes) routes.set(k, r.map(move));
    // Border ports: elkjs put them on the edge of the content; the line goes on to the container's border.
    const ports = new Map<string, Point>();
    for (const [id, p] of content.ports) {
      const [, y] = move(p);
      const east = id.startsWith(`${key}|o|`);
      ports.set(id, [east ? w : 0, y]);
      for (const s of segs) {
        const r = routes.get(s.key);
        if (!r) continue;
        if (east && s.to === id) r.push([w, y]);
        if (!east && s.from === id) r.unshift([0, y]);
      }
    }
    if (c) {
      ports.set(headerPort(key, 'W'), [0, HEADER_H / 2]);
      ports.set(headerPort(key, 'E'), [w, HEADER_H / 2]);
    }
    local.set(key, { w, h, at, routes, ports });
  }

  // Absolute positions, from the diagram down.
  const placedContainers: PlacedContainer[] = [];
  const placedBoxes: PlacedBox[] = [];
  const origin = new Map<string, { x: number; y: number }>();
  const absolute = new Map<string, { x: number; y: number; w: number; h: number }>();
  const place = (key: string, x: number, y: number, depth: number) => {
    const l = local.get(key)!;
    origin.set(key, { x, y });
    if (key !== ROOT) {
      const c = containers.get(key)!;
      placedContainers.push({ container: c, depth, x, y, w: l.w, h: l.h });
      absolute.set(key, { x, y, w: l.w, h: l.h });
      for (const b of c.boxes) {
        const p = l.at.get(b.id)!;
        placedBoxes.push({ node: b, container: key, x: x + p.x, y: y + p.y, note: b.account && c.account && b.account !== c.account ? `account ${b.account}` : null });
        absolute.set(b.id, { x: x + p.x, y: y + p.y, w: ITEM_W, h: ITEM_H });
      }
    }
    for (const child of childrenOf(key)) {
      const p = l.at.get(child)!;
      place(child, x + p.x, y + p.y, key === ROOT ? 0 : depth + 1);
    }
  };
  place(ROOT, MARGIN, MARGIN, 0);

  // The icon side (or header side) where a line starts or ends.
  const endPoint = (anchor: string, side: 'W' | 'E'): Point => {
    const r = absolute.get(anchor)!;
    if (containers.has(anchor)) return [side === 'E' ? r.x + r.w : r.x, r.y + HEADER_H / 2];
    return [side === 'E' ? r.x + ICON_X + ICON : r.x + ICON_X, r.y + ICON / 2];
  };
  // What an edge label must not cover: icons, node labels, container titles (and, below, other labels and lines).
  const ink = new GridIndex();
  for (const b of placedBoxes) {
    ink.add({ x: b.x + ICON_X, y: b.y, w: ICON, h: ICON });
    ink.add({ x: b.x, y: b.y + ICON, w: ITEM_W, h: ITEM_H - ICON });
  }
  for (const c of placedContainers) ink.add({ x: c.x, y: c.y, w: c.w, h: HEADER_H });
  const placedEdges: PlacedEdge[] = [];
  for (const [linkKey, link] of links) {
    const pieces = lineSegments.get(linkKey)!;
    let points: Point[] = [];
    let routed = true;
    for (const piece of pieces) {
      const route = local.get(piece.container)!.routes.get(piece.key);
      if (!route || route.length < 2) {
        routed = false;
        break;
      }
      const o = origin.get(piece.container)!;
      points.push(...route.map(([x, y]): Point => [o.x + x, o.y + y]));
    }
    if (routed) {
      points = simplify([endPoint(link.sa, 'E'), ...points, endPoint(link.ta, 'W')]);
      stats.routed_edges++;
    } else {
      points = straightLine(absolute.get(link.sa)!, absolute.get(link.ta)!, containers.has(link.sa), containers.has(link.ta));
      stats.straight_edges++;
    }
    placedEdges.push({ edges: link.edges, source: link.source, target: link.target, points, routed, label: null });
  }
  // Labels go where they cover nothing: no icon, node label, container title, other label or line.
  const lines = new GridIndex<Box & { line: number }>();
  placedEdges.forEach((e, line) => {
    for (let i = 1; i < e.points.length; i++) {
      const [[ax, ay], [bx, by]] = [e.points[i - 1]!, e.points[i]!];
      lines.add({ x: Math.min(ax, bx) - 0.5, y: Math.min(ay, by) - 0.5, w: Math.abs(bx - ax) + 1, h: Math.abs(by - ay) + 1, line });
    }
  });
  const labels = new GridIndex<EdgeLabel>();
  placedEdges.forEach((e, line) => {
    const text = [...new Set(e.edges.map((x) => edgeLabel(x.type)).filter(Boolean))].sort().join(', ');
    if (!e.routed || !text) return;
    e.label = labelOn(e.points, text, (box) => !ink.find(box) && !labels.find(box) && !lines.find(box, (o) => o.line !== line));
    if (e.label) labels.add(e.label);
  });

  stats.layout_ms = Date.now() - started;
  const root = local.get(ROOT)!;
  return {
    width: Math.ceil(root.w + 2 * MARGIN),
    height: Math.ceil(root.h + 2 * MARGIN),
    containers: placedContainers,
    boxes: placedBoxes,
    edges: placedEdges,
    dropped,
    stats,
  };
}

function titleWidth(c: Container): number {
  const badge = c.severity ? badgeWidth(badgeText(c.severity, c.findings)) + 8 : 0;
  return Math.ceil(textWidth(c.label, TITLE_FONT)) + 48 + badge;
}

/** Removes repeated points and the middle of three points on one horizontal or vertical line. */
function simplify(points: Point[]): Point[] {
  const out: Point[] = [];
  for (const p of points) {
    const last = out[out.length - 1];
    if (last && Math.abs(last[0] - p[0]) < 0.01 && Math.abs(last[1] - p[1]) < 0.01) continue;
    const before = out[out.length - 2];
    if (
      before &&
      last &&
      ((Math.abs(before[0] - last[0]) < 0.01 && Math.abs(last[0] - p[0]) < 0.01) || (Math.abs(before[1] - last[1]) < 0.01 && Math.abs(last[1] - p[1]) < 0.01))
    ) {
      out[out.length - 1] = p;
      continue;
    }
    out.push(p);
  }
  return out;
}

/** The fallback: a straight line between the two icons (or headers), cut at the icons' borders. */
function straightLine(
  ra: { x: number; y: number; w: number; h: number },
  rb: { x: number; y: number; w: number; h: number },
  aIsContainer: boolean,
  bIsContainer: boolean,
): Point[] {
  const icon = (r: typeof ra) => ({ x: r.x + ICON_X, y: r.y, w: ICON, h: ICON });
  const centre = (r: typeof ra, isContainer: boolean): Point => (isContainer ? [r.x + Math.min(r.w / 2, 120), r.y + HEADER_H / 2] : [r.x + ICON_X + ICON / 2, r.y + ICON / 2]);
  const cut = (r: { w: number; h: number }, from: Point, to: Point): Point => {
    const dx = to[0] - from[0];
    const dy = to[1] - from[1];
    const tx = dx === 0 ? Infinity : r.w / 2 / Math.abs(dx);
    const ty = dy === 0 ? Infinity : r.h / 2 / Math.abs(dy);
    const t = Math.min(tx, ty, 1);
    return [from[0] + dx * t, from[1] + dy * t];
  };
  const a = centre(ra, aIsContainer);
  const b = centre(rb, bIsContainer);
  return [aIsContainer ? a : cut(icon(ra), a, b), bIsContainer ? b : cut(icon(rb), b, a)];
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

interface Content {
  at: Map<string, { x: number; y: number }>;
  routes: Map<string, Point[]>;
  /** The container's own border ports, where elkjs put them (content coordinates). */
  ports: Map<string, Point>;
  cw: number;
  ch: number;
}

/** Child containers packed in rows, then the boxes in a grid below them (in type and name order). */
function gridLayout(childItems: Item[], boxIds: string[], isRoot: boolean): Content {
  const packed = shelfPack(childItems, CONTAINER_GAP, CONTAINER_GAP);
  const at = packed.at;
  let cw = packed.cw;
  let ch = packed.ch;
  if (boxIds.length && !isRoot) {
    const cellW = ITEM_W + ITEM_GAP_X;
    const cellH = ITEM_H + ITEM_GAP_Y;
    let cols = Math.max(1, Math.round(Math.sqrt((1.6 * boxIds.length * cellH) / cellW)));
    cols = Math.max(cols, Math.floor((packed.cw + ITEM_GAP_X) / cellW));
    cols = Math.min(cols, boxIds.length);
    const top = packed.ch > 0 ? packed.ch + CONTAINER_GAP : 0;
    boxIds.forEach((id, i) => at.set(id, { x: (i % cols) * cellW, y: top + Math.floor(i / cols) * cellH }));
    const rows = Math.ceil(boxIds.length / cols);
    cw = Math.max(cw, cols * cellW - ITEM_GAP_X);
    ch = top + rows * cellH - ITEM_GAP_Y;
  }
  return { at, routes: new Map(), ports: new Map(), cw, ch };
}

/**
 * A container holding one item, which lines only pass through: each line runs straight across,
 * from the item's port to the container's border at the same height.
 */
function singleItem(key: string, item: { key: string; local: Local | null }, segs: Segment[]): Content {
  const w = item.local?.w ?? ITEM_W;
  const h = item.local?.h ?? ITEM_H;
  const itemPort = (id: string): Point => {
    const known = item.local?.ports.get(id);
    if (known) return known;
    if (!item.local) return id.endsWith('|E') ? [ITEM_W, ICON / 2] : [0, ICON / 2];
    // A child laid out as a grid: its ports are at the middle of its header's sides.
    return [id.startsWith(`${item.key}|o|`) || id.endsWith('|HE') ? w : 0, HEADER_H / 2];
  };
  const routes = new Map<string, Point[]>();
  const ports = new Map<string, Point>();
  for (const s of segs) {
    if (s.to.startsWith(`${key}|o|`)) {
      const [x, y] = itemPort(s.from);
      routes.set(s.key, [
        [x, y],
        [w, y],
      ]);
      ports.set(s.to, [w, y]);
    } else {
      const [x, y] = itemPort(s.to);
      routes.set(s.key, [
        [0, y],
        [x, y],
      ]);
      ports.set(s.from, [0, y]);
    }
  }
  return { at: new Map([[item.key, { x: 0, y: 0 }]]), routes, ports, cw: w, ch: h };
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
interface ElkNode {
  id: string;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  ports?: Array<{ id: string; x?: number; y?: number }>;
  children?: ElkNode[];
  edges?: Array<{ id: string; sections?: ElkSection[] }>;
}

const EDGE_LABEL_H = 12;
const ARROW_CLEARANCE = 12;

type Box = { x: number; y: number; w: number; h: number };
const overlaps = (a: Box, b: Box) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** Rectangles bucketed by 256-pixel cells, so a lookup reads only its neighbourhood. */
class GridIndex<T extends Box = Box> {
  private readonly cells = new Map<string, T[]>();
  private keys(r: Box): string[] {
    const out: string[] = [];
    for (let cx = Math.floor(r.x / 256); cx <= Math.floor((r.x + r.w) / 256); cx++)
      for (let cy = Math.floor(r.y / 256); cy <= Math.floor((r.y + r.h) / 256); cy++) out.push(`${cx},${cy}`);
    return out;
  }
  add(r: T): void {
    for (const k of this.keys(r)) {
      const list = this.cells.get(k);
      if (list) list.push(r);
      else this.cells.set(k, [r]);
    }
  }
  find(r: Box, test: (o: T) => boolean = () => true): T | undefined {
    for (const k of this.keys(r)) {
      const hit = this.cells.get(k)?.find((o) => overlaps(r, o) && test(o));
      if (hit) return hit;
    }
    return undefined;
  }
}

/**
 * A line's label, on its route where `free` says it covers nothing: on the longest horizontal piece
 * first (centred, else slid towards either end, overhanging a short piece if need be), then on a
 * vertical piece, never on the arrowhead. Null when nowhere is free: the draw.io file still names the
 * type in `edge_type`. Placed here rather than by elkjs: elkjs's label layers double its time and
 * widen the drawing.
 */
function labelOn(route: Point[], text: string, free: (box: Box) => boolean): EdgeLabel | null {
  const w = Math.ceil(textWidth(text, EDGE_FONT)) + 6;
  const h = EDGE_LABEL_H;
  const horizontal: Array<{ x1: number; x2: number; y: number }> = [];
  const vertical: Array<{ x: number; y1: number; y2: number }> = [];
  for (let i = 1; i < route.length; i++) {
    const [ax, ay] = route[i - 1]!;
    let [bx, by] = route[i]!;
    if (i === route.length - 1) {
      // Keep clear of the arrowhead.
      bx -= Math.sign(bx - ax) * ARROW_CLEARANCE;
      by -= Math.sign(by - ay) * ARROW_CLEARANCE;
    }
    if (Math.abs(ay - by) < 0.01) horizontal.push({ x1: Math.min(ax, bx), x2: Math.max(ax, bx), y: ay });
    else if (Math.abs(ax - bx) < 0.01) vertical.push({ x: ax, y1: Math.min(ay, by), y2: Math.max(ay, by) });
  }
  horizontal.sort((a, b) => b.x2 - b.x1 - (a.x2 - a.x1));
  vertical.sort((a, b) => b.y2 - b.y1 - (a.y2 - a.y1));
  const candidates: Box[] = [];
  for (const p of horizontal) {
    const mid = (p.x1 + p.x2 - w) / 2;
    const xs = p.x2 - p.x1 >= w ? [mid, p.x1 + 4, p.x2 - w - 4, (p.x1 + mid) / 2, (mid + p.x2 - w) / 2].filter((x) => x >= p.x1 && x + w <= p.x2) : [mid];
    for (const x of xs) candidates.push({ x, y: p.y - h / 2, w, h });
  }
  for (const p of vertical) if (p.y2 - p.y1 >= h + 8) candidates.push({ x: p.x - w / 2, y: (p.y1 + p.y2 - h) / 2, w, h });
  const fit = candidates.find(free);
  return fit ? { text, ...fit } : null;
}

/**
 * One container's content laid out by elkjs: its items with their ports fixed where the items' own
 * layouts put them, its own border ports on the east (outgoing) and west (incoming) sides, and its
 * segments. elkjs cannot give the graph it lays out ports of its own, so the
 * container is a node inside an empty root.
 */
async function elkLayout(
  elk: Elk,
  key: string,
  childItems: Array<{ key: string; local: Local }>,
  boxIds: string[],
  segs: Segment[],
  outs: Set<string> | undefined,
  ins: Set<string> | undefined,
): Promise<Content> {
  const port = (id: string, x: number, y: number) => ({ id, x, y, width: 0, height: 0 });
  const children = [
    ...childItems.map(({ key: k, local: l }) => ({
      id: k,
      width: l.w,
      height: l.h,
      layoutOptions: { 'elk.portConstraints': 'FIXED_POS' },
      ports: [...l.ports].map(([id, [x, y]]) => port(id, x, y)),
    })),
    ...boxIds.map((id) => ({
      id,
      width: ITEM_W,
      height: ITEM_H,
      layoutOptions: { 'elk.portConstraints': 'FIXED_POS' },
      ports: [port(boxPort(id, 'W'), 0, ICON / 2), port(boxPort(id, 'E'), ITEM_W, ICON / 2)],
    })),
  ];
  // A child laid out as a grid has no border ports yet: they go to the middle of its header's sides.
  for (const { key: k, local: l } of childItems) {
    const child = children.find((c) => c.id === k)!;
    const known = new Set(child.ports.map((p) => p.id));
    for (const s of segs) {
      for (const id of [s.from, s.to]) {
        if (known.has(id) || !id.startsWith(`${k}|`)) continue;
        child.ports.push(port(id, id.startsWith(`${k}|o|`) ? l.w : 0, HEADER_H / 2));
        known.add(id);
      }
    }
  }
  const graph = {
    id: '(root)',
    layoutOptions: { 'elk.algorithm': 'layered', 'elk.padding': '[top=0,left=0,bottom=0,right=0]' },
    children: [
      {
        id: key === ROOT ? '(diagram)' : key,
        layoutOptions: {
          'elk.algorithm': 'layered',
          'elk.direction': 'RIGHT',
          'elk.padding': '[top=0,left=0,bottom=0,right=0]',
          'elk.portConstraints': 'FIXED_SIDE',
          'elk.spacing.nodeNode': String(key === ROOT ? CONTAINER_GAP : ITEM_GAP_Y),
          'elk.layered.spacing.nodeNodeBetweenLayers': '48',
          'elk.spacing.componentComponent': String(CONTAINER_GAP),
          'elk.edgeRouting': 'ORTHOGONAL',
          'elk.separateConnectedComponents': 'true',
          'elk.aspectRatio': '1.6',
          'elk.layered.thoroughness': '1',
        },
        ports: [
          ...[...(outs ?? [])].map((id) => ({ id, width: 0, height: 0, layoutOptions: { 'elk.port.side': 'EAST' } })),
          ...[...(ins ?? [])].map((id) => ({ id, width: 0, height: 0, layoutOptions: { 'elk.port.side': 'WEST' } })),
        ],
        children,
        edges: segs.map((s, i) => ({ id: `e${i}`, sources: [s.from], targets: [s.to] })),
      },
    ],
  };
  const result = (await elk.layout(graph)) as ElkNode;
  const inner = result.children![0]!;
  const at = new Map<string, { x: number; y: number }>();
  let cw = inner.width ?? 0;
  let ch = inner.height ?? 0;
  for (const child of inner.children ?? []) {
    at.set(child.id, { x: child.x ?? 0, y: child.y ?? 0 });
    cw = Math.max(cw, (child.x ?? 0) + (child.width ?? 0));
    ch = Math.max(ch, (child.y ?? 0) + (child.height ?? 0));
  }
  const routes = new Map<string, Point[]>();
  for (const edge of inner.edges ?? []) {
    const s = segs[Number(edge.id.slice(1))]!;
    const section = edge.sections?.[0];
    if (!section) continue;
    routes.set(s.key, [[section.startPoint.x, section.startPoint.y], ...(section.bendPoints ?? []).map((p): Point => [p.x, p.y]), [section.endPoint.x, section.endPoint.y]]);
  }
  const ports = new Map<string, Point>();
  for (const p of inner.ports ?? []) ports.set(p.id, [p.x ?? 0, p.y ?? 0]);
  return { at, routes, ports, cw, ch };
}
