import type { Diagram } from './layout.js';
import {
  BADGE_H, BOX_H, BOX_W, SEVERITY_STYLE, badgeText, badgeWidth, boxLabels, drawioContainerStyle, drawioNodeStyle, escapeXml,
  TITLE_FONT, fitText,
} from './style.js';

const EDGE_STYLE = 'edgeStyle=orthogonalEdgeStyle;rounded=1;html=1;endArrow=block;endFill=1;strokeColor=#5f6b7a;opacity=70;';

const n = (v: number) => String(Math.round(v));

function badgeCell(id: string, parent: string, x: number, y: number, severity: keyof typeof SEVERITY_STYLE, findings: number): string {
  const text = badgeText(severity, findings);
  const s = SEVERITY_STYLE[severity];
  return (
    `<mxCell id="${id}" value="${escapeXml(text)}" style="rounded=1;arcSize=50;html=1;fillColor=${s.fill};fontColor=${s.text};strokeColor=none;fontSize=10;fontStyle=1;fontFamily=DejaVu Sans Mono;resizable=0;movable=0;" vertex="1" connectable="0" parent="${parent}">` +
    `<mxGeometry x="${n(x)}" y="${n(y)}" width="${badgeWidth(text)}" height="${BADGE_H}" as="geometry"/></mxCell>\n`
  );
}

/**
 * The diagram as a draw.io file (uncompressed mxfile, one diagram), piece by piece so it can be
 * streamed. Containers are swimlanes (children are placed relative to them); nodes are UserObjects
 * that keep the resource id, type and open findings as data; each node with open findings has a
 * severity badge as a child cell; every edge of the graph is kept.
 */
export function* drawioChunks(d: Diagram, options: { name?: string; generatedAt?: string } = {}): Generator<string> {
  const modified = options.generatedAt ?? new Date().toISOString();
  yield `<?xml version="1.0" encoding="UTF-8"?>\n<mxfile host="ControlGraph" modified="${escapeXml(modified)}" agent="ControlGraph" version="24.0.0" type="device">\n`;
  yield `<diagram id="topology" name="${escapeXml(options.name ?? 'Topology')}">\n`;
  yield `<mxGraphModel dx="${d.width}" dy="${d.height}" grid="1" gridSize="10" guides="1" tooltips="1" connect="1" arrows="1" fold="1" page="0" pageScale="1" pageWidth="${d.width}" pageHeight="${d.height}" math="0" shadow="0">\n<root>\n<mxCell id="0"/>\n<mxCell id="1" parent="0"/>\n`;
  const cellOf = new Map<string, string>();
  const origin = new Map<string, { x: number; y: number }>();
  const containers = [...d.containers].sort((a, b) => a.depth - b.depth);
  containers.forEach((p, i) => {
    cellOf.set(`container:${p.container.key}`, `c${i + 1}`);
    if (p.container.nodeId) cellOf.set(p.container.nodeId, `c${i + 1}`);
    origin.set(p.container.key, { x: p.x, y: p.y });
  });
  let count = 0;
  for (const p of containers) {
    const c = p.container;
    const id = cellOf.get(`container:${c.key}`)!;
    const parent = c.parent ? cellOf.get(`container:${c.parent}`)! : '1';
    const base = c.parent ? origin.get(c.parent)! : { x: 0, y: 0 };
    const badgeW = c.severity ? badgeWidth(badgeText(c.severity, c.findings)) + 8 : 0;
    const title = fitText(c.label, TITLE_FONT, p.w - 20 - badgeW);
    const attrs = c.nodeId ? ` resource_id="${escapeXml(c.nodeId)}" container_kind="${c.kind}" severity="${c.severity ?? ''}" open_findings="${c.findings}"` : ` container_kind="${c.kind}"`;
    let out =
      `<UserObject id="${id}" label="${escapeXml(title)}" tooltip="${escapeXml(c.label)}"${attrs}>` +
      `<mxCell style="${drawioContainerStyle(c.kind)}" vertex="1" parent="${parent}">` +
      `<mxGeometry x="${n(p.x - base.x)}" y="${n(p.y - base.y)}" width="${n(p.w)}" height="${n(p.h)}" as="geometry"/></mxCell></UserObject>\n`;
    if (c.severity) out += badgeCell(`${id}b`, id, p.w - badgeW, 5, c.severity, c.findings);
    yield out;
    if (++count % 200 === 0) yield '';
  }
  let i = 0;
  for (const b of d.boxes) {
    const node = b.node;
    const id = `n${++i}`;
    cellOf.set(node.id, id);
    const parent = cellOf.get(`container:${b.container}`)!;
    const base = origin.get(b.container)!;
    const labels = boxLabels(node.name, node.type, node.severity, node.findings);
    const label = `<b>${escapeXml(labels.name)}</b><br><font style="font-size:10px" color="#4a5563">${escapeXml(labels.type)}</font>`;
    let out =
      `<UserObject id="${id}" label="${escapeXml(label)}" tooltip="${escapeXml(`${node.name} (${node.type})`)}" resource_id="${escapeXml(node.id)}" node_type="${escapeXml(node.type)}" name="${escapeXml(node.name)}" severity="${node.severity ?? ''}" open_findings="${node.findings}">` +
      `<mxCell style="${drawioNodeStyle(node.type)}overflow=hidden;" vertex="1" parent="${parent}">` +
      `<mxGeometry x="${n(b.x - base.x)}" y="${n(b.y - base.y)}" width="${BOX_W}" height="${BOX_H}" as="geometry"/></mxCell></UserObject>\n`;
    if (labels.badge && node.severity) out += badgeCell(`${id}b`, id, BOX_W - 8 - badgeWidth(labels.badge), BOX_H - BADGE_H - 6, node.severity, node.findings);
    yield out;
  }
  let e = 0;
  for (const edge of d.edges) {
    const source = cellOf.get(edge.edge.source);
    const target = cellOf.get(edge.edge.target);
    if (!source || !target) continue;
    yield (
      `<UserObject id="e${++e}" label="" edge_type="${escapeXml(edge.edge.type)}">` +
      `<mxCell style="${EDGE_STYLE}" edge="1" parent="1" source="${source}" target="${target}"><mxGeometry relative="1" as="geometry"/></mxCell></UserObject>\n`
    );
  }
  yield '</root>\n</mxGraphModel>\n</diagram>\n</mxfile>\n';
}
