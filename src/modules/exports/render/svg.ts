import { shapeOf, type AwsShape } from './aws-shapes.js';
import type { Diagram, PlacedBox, PlacedContainer } from './layout.js';
import {
  BADGE_FONT,
  BADGE_H,
  CONTAINER_STYLE,
  EDGE_FONT,
  ICON,
  ICON_GROUPS,
  ICON_X,
  ITEM_W,
  LABEL_GAP,
  LINE_H,
  NAME_FONT,
  SEVERITY_STYLE,
  TITLE_FONT,
  TYPE_FONT,
  badgeText,
  badgeWidth,
  containerLook,
  escapeXml,
  fitText,
  itemLabels,
  type ContainerLook,
  type Severity,
} from './style.js';

export const FONT = 'DejaVu Sans Mono, Menlo, Consolas, monospace';
export const EDGE_COLOR = '#545B64';

const r = (n: number) => Math.round(n * 10) / 10;

export function svgBadge(x: number, y: number, severity: Severity, findings: number): string {
  const text = badgeText(severity, findings);
  const w = badgeWidth(text);
  const s = SEVERITY_STYLE[severity];
  return (
    `<rect x="${r(x)}" y="${r(y)}" width="${w}" height="${BADGE_H}" rx="8" fill="${s.fill}" stroke="#ffffff" stroke-width="1"/>` +
    `<text x="${r(x + w / 2)}" y="${r(y + 12)}" font-size="${BADGE_FONT}" font-weight="bold" fill="${s.text}" text-anchor="middle">${escapeXml(text)}</text>`
  );
}

/**
 * The PNG's own icon for a shape (it cannot use draw.io's artwork): a square in the shape's AWS
 * category colour with its short name, filled for a service shape and outlined for a resource
 * shape, as draw.io draws the two kinds.
 */
export function svgIcon(x: number, y: number, size: number, shape: AwsShape): string {
  const text = shape.abbr;
  const font = Math.min(size * 0.42, (size * 0.8) / (Math.max(1, [...text].length) * 0.6021));
  const filled = shape.tile || !shape.glyph;
  return (
    `<rect x="${r(x + 1)}" y="${r(y + 1)}" width="${size - 2}" height="${size - 2}" rx="${r(size * 0.12)}" fill="${filled ? shape.color : '#ffffff'}" stroke="${shape.color}" stroke-width="2"/>` +
    `<text x="${r(x + size / 2)}" y="${r(y + size / 2 + font * 0.36)}" font-size="${r(font)}" font-weight="bold" fill="${filled ? '#ffffff' : shape.color}" text-anchor="middle">${escapeXml(text)}</text>`
  );
}

const GROUP_ICON_TEXT: Record<ContainerLook, string> = {
  account: 'ACCT',
  managed: 'AWS',
  no_account: '',
  region: 'RGN',
  global: '',
  vpc: 'VPC',
  subnet_public: 'SUB',
  subnet_private: 'SUB',
  subnet: '',
};

/** A container as draw.io's AWS group draws it: frame, the group's icon in the corner, title, badge. */
export function svgContainer(p: { x: number; y: number; w: number; h: number }, look: ContainerLook, label: string, severity: Severity | null, findings: number): string {
  const style = CONTAINER_STYLE[look];
  const dash = style.dashed ? ' stroke-dasharray="6 4"' : '';
  const icon = ICON_GROUPS.has(look);
  const left = icon ? 32 : 10;
  const badgeW = severity ? badgeWidth(badgeText(severity, findings)) + 8 : 0;
  const title = fitText(label, TITLE_FONT, p.w - left - 10 - badgeW);
  let out =
    `<g><rect x="${r(p.x)}" y="${r(p.y)}" width="${r(p.w)}" height="${r(p.h)}" fill="${style.fill}" stroke="${style.stroke}" stroke-width="1.5"${dash}/>` +
    `<text x="${r(p.x + left)}" y="${r(p.y + 18)}" font-size="${TITLE_FONT}" font-weight="bold" fill="${style.title}">${escapeXml(title)}</text>`;
  if (icon) {
    out +=
      `<rect x="${r(p.x)}" y="${r(p.y)}" width="25" height="25" fill="${style.stroke}"/>` +
      `<text x="${r(p.x + 12.5)}" y="${r(p.y + 15.5)}" font-size="7.5" font-weight="bold" fill="#ffffff" text-anchor="middle">${GROUP_ICON_TEXT[look]}</text>`;
  }
  if (severity) out += svgBadge(p.x + left + Math.ceil(title.length * 0.6021 * TITLE_FONT) + 8, p.y + 6, severity, findings);
  return out + '</g>\n';
}

function containerSvg(p: PlacedContainer): string {
  const c = p.container;
  return svgContainer(p, containerLook(c.kind, c.variant), c.label, c.severity, c.findings);
}

function boxSvg(b: PlacedBox): string {
  const n = b.node;
  const shape = shapeOf(n.type, n.variant);
  const labels = itemLabels(n.name, shape.label, b.note);
  const cx = b.x + ITEM_W / 2;
  let y = b.y + ICON + LABEL_GAP + 10;
  let out = `<g class="node">${svgIcon(b.x + ICON_X, b.y, ICON, shape)}`;
  for (const line of labels.name) {
    out += `<text x="${r(cx)}" y="${r(y)}" font-size="${NAME_FONT}" font-weight="bold" fill="#232F3E" text-anchor="middle">${escapeXml(line)}</text>`;
    y += LINE_H;
  }
  out += `<text x="${r(cx)}" y="${r(y - 1)}" font-size="${TYPE_FONT}" fill="#545B64" text-anchor="middle">${escapeXml(labels.type)}</text>`;
  if (n.severity) {
    const w = badgeWidth(badgeText(n.severity, n.findings));
    out += svgBadge(b.x + ICON_X + ICON - w + 10, b.y - 6, n.severity, n.findings);
  }
  return out + '</g>\n';
}

/**
 * A line with its arrowhead drawn as a triangle (not an SVG marker: resvg 2.6 panics on markers in
 * some layouts). The line stops inside the head so its end does not show past the tip.
 */
export function svgArrow(points: Array<[number, number]>, dashed: boolean): string {
  const [ex, ey] = points[points.length - 1]!;
  let k = points.length - 2;
  while (k > 0 && points[k]![0] === ex && points[k]![1] === ey) k--;
  const [sx, sy] = points[k]!;
  const len = Math.hypot(ex - sx, ey - sy) || 1;
  const dx = (ex - sx) / len;
  const dy = (ey - sy) / len;
  const head = Math.min(9, len);
  const bx = ex - dx * head;
  const by = ey - dy * head;
  const line = [...points.slice(0, -1), [ex - dx * head * 0.6, ey - dy * head * 0.6] as [number, number]];
  return (
    `<polyline points="${line.map(([x, y]) => `${r(x)},${r(y)}`).join(' ')}" fill="none" stroke="${EDGE_COLOR}" stroke-width="1.3" stroke-linejoin="round"${dashed ? ' stroke-dasharray="4 3"' : ''}/>` +
    `<polygon points="${r(ex)},${r(ey)} ${r(bx - dy * 4)},${r(by + dx * 4)} ${r(bx + dy * 4)},${r(by - dx * 4)}" fill="${EDGE_COLOR}"/>\n`
  );
}

/**
 * The diagram as SVG, produced piece by piece: containers outermost first, then edges with their
 * arrowheads and labels, then nodes, so no line crosses a label. Every label was cut to its width
 * by `fitText`.
 */
export function* svgChunks(d: Diagram): Generator<string> {
  yield `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${d.width}" height="${d.height}" viewBox="0 0 ${d.width} ${d.height}" font-family="${FONT}">\n`;
  yield `<rect width="100%" height="100%" fill="#ffffff"/>\n`;
  for (const p of [...d.containers].sort((a, b) => a.depth - b.depth)) yield containerSvg(p);
  for (const e of d.edges) if (e.points.length >= 2) yield svgArrow(e.points, !e.routed);
  for (const e of d.edges) {
    if (!e.label) continue;
    const l = e.label;
    yield `<g><rect x="${r(l.x)}" y="${r(l.y)}" width="${r(l.w)}" height="${r(l.h)}" fill="#ffffff" fill-opacity="0.9"/><text x="${r(l.x + l.w / 2)}" y="${r(l.y + l.h - 3)}" font-size="${EDGE_FONT}" fill="#232F3E" text-anchor="middle">${escapeXml(l.text)}</text></g>\n`;
  }
  for (const b of d.boxes) yield boxSvg(b);
  yield '</svg>\n';
}
