import { drawioShapeStyle, shapeOf } from './aws-shapes.js';
import type { Diagram, PlacedEdge } from './layout.js';
import { BADGE_H, CONTAINER_STYLE, ICON, ICON_GROUPS, ICON_X, SEVERITY_STYLE, TITLE_FONT, badgeText, badgeWidth, containerLook, escapeXml, fitText, itemLabels } from './style.js';

/** draw.io's AWS arrow ("AWS / Arrows"): dark grey, solid block head; the route is the layout's own. */
const EDGE_STYLE = 'html=1;endArrow=block;endFill=1;strokeColor=#545B64;rounded=1;fontSize=9;fontColor=#232F3E;labelBackgroundColor=#ffffff;';

const n = (v: number) => String(Math.round(v));
const f = (v: number) => String(Math.round(v * 1000) / 1000);

function badgeCell(id: string, parent: string, x: number, y: number, severity: keyof typeof SEVERITY_STYLE, findings: number): string {
  const text = badgeText(severity, findings);
  const s = SEVERITY_STYLE[severity];
  return (
    `<mxCell id="${id}" value="${escapeXml(text)}" style="rounded=1;arcSize=50;html=1;fillColor=${s.fill};fontColor=${s.text};strokeColor=#ffffff;fontSize=10;fontStyle=1;resizable=0;movable=0;" vertex="1" connectable="0" parent="${parent}">` +
    `<mxGeometry x="${n(x)}" y="${n(y)}" width="${badgeWidth(text)}" height="${BADGE_H}" as="geometry"/></mxCell>\n`
  );
}

type Rect = { x: number; y: number; w: number; h: number };

/** Where along the polyline (draw.io's -1…1) a label centre is, and its offset from that point. */
function labelPlacement(points: Array<[number, number]>, cx: number, cy: number): { at: number; dx: number; dy: number } {
  let total = 0;
  const lengths: number[] = [];
  for (let i = 1; i < points.length; i++) {
    const len = Math.hypot(points[i]![0] - points[i - 1]![0], points[i]![1] - points[i - 1]![1]);
    lengths.push(len);
    total += len;
  }
  let best = { d: Infinity, s: 0, px: points[0]![0], py: points[0]![1] };
  let run = 0;
  for (let i = 1; i < points.length; i++) {
    const [ax, ay] = points[i - 1]!;
    const [bx, by] = points[i]!;
    const len = lengths[i - 1]!;
    const t = len === 0 ? 0 : Math.max(0, Math.min(1, ((cx - ax) * (bx - ax) + (cy - ay) * (by - ay)) / (len * len)));
    const px = ax + t * (bx - ax);
    const py = ay + t * (by - ay);
    const d = Math.hypot(cx - px, cy - py);
    if (d < best.d) best = { d, s: run + t * len, px, py };
    run += len;
  }
  return { at: total === 0 ? 0 : (2 * best.s) / total - 1, dx: cx - best.px, dy: cy - best.py };
}

function edgeCell(id: string, e: PlacedEdge, source: { cell: string; rect: Rect }, target: { cell: string; rect: Rect }): string {
  const types = [...new Set(e.edges.map((x) => x.type))];
  const attrs = `id="${id}" label="${escapeXml(e.label?.text ?? '')}" edge_type="${escapeXml(types.join(','))}" edges="${e.edges.length}"`;
  if (!e.routed || e.points.length < 2) {
    return (
      `<UserObject ${attrs}><mxCell style="edgeStyle=orthogonalEdgeStyle;${EDGE_STYLE}" edge="1" parent="1" source="${source.cell}" target="${target.cell}">` +
      `<mxGeometry relative="1" as="geometry"/></mxCell></UserObject>\n`
    );
  }
  // The line leaves and enters where the layout put its ends (draw.io's fixed connection points).
  const start = e.points[0]!;
  const end = e.points[e.points.length - 1]!;
  const fraction = (r: Rect, p: [number, number]) => ({
    x: Math.max(0, Math.min(1, (p[0] - r.x) / r.w)),
    y: Math.max(0, Math.min(1, (p[1] - r.y) / r.h)),
  });
  const exit = fraction(source.rect, start);
  const entry = fraction(target.rect, end);
  const ends = `exitX=${f(exit.x)};exitY=${f(exit.y)};exitDx=0;exitDy=0;exitPerimeter=0;` + `entryX=${f(entry.x)};entryY=${f(entry.y)};entryDx=0;entryDy=0;entryPerimeter=0;`;
  const inner = e.points.slice(1, -1);
  const waypoints = inner.length ? `<Array as="points">${inner.map(([x, y]) => `<mxPoint x="${f(x)}" y="${f(y)}"/>`).join('')}</Array>` : '';
  let geometry = `<mxGeometry relative="1" as="geometry">${waypoints}</mxGeometry>`;
  if (e.label) {
    const p = labelPlacement(e.points, e.label.x + e.label.w / 2, e.label.y + e.label.h / 2);
    geometry = `<mxGeometry x="${f(p.at)}" relative="1" as="geometry"><mxPoint x="${f(p.dx)}" y="${f(p.dy)}" as="offset"/>${waypoints}</mxGeometry>`;
  }
  return `<UserObject ${attrs}><mxCell style="edgeStyle=none;${ends}${EDGE_STYLE}" edge="1" parent="1" source="${source.cell}" target="${target.cell}">${geometry}</mxCell></UserObject>\n`;
}

/**
 * The diagram as a draw.io file (uncompressed mxfile, one diagram), piece by piece so it can be
 * streamed. Containers are draw.io's AWS groups (account, region, VPC, public and private subnet;
 * children are placed relative to them); nodes are draw.io's AWS shapes, as UserObjects that keep
 * the resource id, type, account and open findings as data, with a severity badge as a child cell;
 * edges are directed, follow the layout's route (its bend points as waypoints) and carry their type.
 * An edge between a node and a container holding it is not drawn: the nesting shows it.
 */
export function* drawioChunks(d: Diagram, options: { name?: string; generatedAt?: string } = {}): Generator<string> {
  const modified = options.generatedAt ?? new Date().toISOString();
  yield `<?xml version="1.0" encoding="UTF-8"?>\n<mxfile host="ControlGraph" modified="${escapeXml(modified)}" agent="ControlGraph" version="24.0.0" type="device">\n`;
  yield `<diagram id="topology" name="${escapeXml(options.name ?? 'Topology')}">\n`;
  yield `<mxGraphModel dx="${d.width}" dy="${d.height}" grid="1" gridSize="10" guides="1" tooltips="1" connect="1" arrows="1" fold="1" page="0" pageScale="1" pageWidth="${d.width}" pageHeight="${d.height}" math="0" shadow="0">\n<root>\n<mxCell id="0"/>\n<mxCell id="1" parent="0"/>\n`;
  const cellOf = new Map<string, { cell: string; rect: Rect }>();
  const origin = new Map<string, { x: number; y: number }>();
  const containers = [...d.containers].sort((a, b) => a.depth - b.depth);
  containers.forEach((p, i) => {
    const cell = { cell: `c${i + 1}`, rect: { x: p.x, y: p.y, w: p.w, h: p.h } };
    cellOf.set(`container:${p.container.key}`, cell);
    if (p.container.nodeId) cellOf.set(p.container.nodeId, cell);
    origin.set(p.container.key, { x: p.x, y: p.y });
  });
  let count = 0;
  for (const p of containers) {
    const c = p.container;
    const id = cellOf.get(`container:${c.key}`)!.cell;
    const parent = c.parent ? cellOf.get(`container:${c.parent}`)!.cell : '1';
    const base = c.parent ? origin.get(c.parent)! : { x: 0, y: 0 };
    const look = containerLook(c.kind, c.variant);
    const badgeW = c.severity ? badgeWidth(badgeText(c.severity, c.findings)) + 8 : 0;
    const title = fitText(c.label, TITLE_FONT, p.w - (ICON_GROUPS.has(look) ? 40 : 18) - badgeW);
    const attrs = c.nodeId
      ? ` resource_id="${escapeXml(c.nodeId)}" container_kind="${c.kind}" severity="${c.severity ?? ''}" open_findings="${c.findings}"`
      : ` container_kind="${c.kind}"`;
    let out =
      `<UserObject id="${id}" label="${escapeXml(title)}" tooltip="${escapeXml(c.label)}"${attrs}>` +
      `<mxCell style="${CONTAINER_STYLE[look].drawio}" vertex="1" parent="${parent}">` +
      `<mxGeometry x="${n(p.x - base.x)}" y="${n(p.y - base.y)}" width="${n(p.w)}" height="${n(p.h)}" as="geometry"/></mxCell></UserObject>\n`;
    if (c.severity) out += badgeCell(`${id}b`, id, p.w - badgeW, 6, c.severity, c.findings);
    yield out;
    if (++count % 200 === 0) yield '';
  }
  let i = 0;
  for (const b of d.boxes) {
    const node = b.node;
    const id = `n${++i}`;
    const parent = cellOf.get(`container:${b.container}`)!.cell;
    const base = origin.get(b.container)!;
    const shape = shapeOf(node.type, node.variant);
    // The shape keeps its own proportions inside the icon square.
    const scale = ICON / Math.max(shape.w, shape.h);
    const w = Math.round(shape.w * scale);
    const h = Math.round(shape.h * scale);
    const x = b.x + ICON_X + (ICON - w) / 2;
    const y = b.y + (ICON - h) / 2;
    cellOf.set(node.id, { cell: id, rect: { x, y, w, h } });
    const labels = itemLabels(node.name, shape.label, b.note);
    const label = `<b>${labels.name.map(escapeXml).join('<br>')}</b><br><font style="font-size:10px" color="#545B64">${escapeXml(labels.type)}</font>`;
    let out =
      `<UserObject id="${id}" label="${escapeXml(label)}" tooltip="${escapeXml(`${node.name} (${node.type}${node.account ? `, account ${node.account}` : ''})`)}" resource_id="${escapeXml(node.id)}" node_type="${escapeXml(node.type)}" name="${escapeXml(node.name)}" account_id="${escapeXml(node.account ?? '')}" severity="${node.severity ?? ''}" open_findings="${node.findings}">` +
      `<mxCell style="${drawioShapeStyle(shape)}" vertex="1" parent="${parent}">` +
      `<mxGeometry x="${n(x - base.x)}" y="${n(y - base.y)}" width="${w}" height="${h}" as="geometry"/></mxCell></UserObject>\n`;
    if (node.severity) {
      const bw = badgeWidth(badgeText(node.severity, node.findings));
      out += badgeCell(`${id}b`, id, w - bw + 10 + (ICON - w) / 2, -6 - (ICON - h) / 2, node.severity, node.findings);
    }
    yield out;
  }
  let e = 0;
  for (const edge of d.edges) {
    const source = cellOf.get(edge.source);
    const target = cellOf.get(edge.target);
    if (!source || !target) continue;
    yield edgeCell(`e${++e}`, snapEnds(edge, source.rect, target.rect), source, target);
  }
  yield '</root>\n</mxGraphModel>\n</diagram>\n</mxfile>\n';
}

/**
 * The layout ends a line at the side of the icon square; a shape narrower than the square starts
 * at its own side, on the same horizontal line.
 */
function snapEnds(e: PlacedEdge, source: Rect, target: Rect): PlacedEdge {
  if (!e.routed || e.points.length < 2) return e;
  const points = e.points.map((p): [number, number] => [p[0], p[1]]);
  const first = points[0]!;
  const last = points[points.length - 1]!;
  const snap = (p: [number, number], r: Rect) => {
    if (p[1] < r.y || p[1] > r.y + r.h) return;
    if (Math.abs(p[0] - r.x) <= ICON / 2) p[0] = r.x;
    else if (Math.abs(p[0] - (r.x + r.w)) <= ICON / 2) p[0] = r.x + r.w;
  };
  snap(first, source);
  snap(last, target);
  return { ...e, points };
}
