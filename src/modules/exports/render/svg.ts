import type { Diagram } from './layout.js';
import {
  BADGE_FONT, BADGE_H, BOX_H, BOX_W, CATEGORY_STYLE, CONTAINER_STYLE, HEADER_H, NAME_FONT, SEVERITY_STYLE, STRIPE_W, TITLE_FONT,
  TYPE_FONT, badgeText, badgeWidth, boxLabels, categoryOf, escapeXml, fitText, type Severity,
} from './style.js';

const FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace";

function badge(x: number, y: number, severity: Severity, findings: number): string {
  const text = badgeText(severity, findings);
  const w = badgeWidth(text);
  const s = SEVERITY_STYLE[severity];
  return (
    `<rect x="${r(x)}" y="${r(y)}" width="${w}" height="${BADGE_H}" rx="8" fill="${s.fill}"/>` +
    `<text x="${r(x + w / 2)}" y="${r(y + 12)}" font-size="${BADGE_FONT}" font-weight="bold" fill="${s.text}" text-anchor="middle">${escapeXml(text)}</text>`
  );
}

const r = (n: number) => Math.round(n * 10) / 10;

/**
 * The diagram as SVG, produced piece by piece (containers outermost first, then edges, then boxes,
 * so no line crosses a label). Every label was cut to its box's width by `fitText`.
 */
export function* svgChunks(d: Diagram): Generator<string> {
  yield `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${d.width}" height="${d.height}" viewBox="0 0 ${d.width} ${d.height}" font-family="${FONT}">\n`;
  yield `<rect width="100%" height="100%" fill="#ffffff"/>\n`;
  const containers = [...d.containers].sort((a, b) => a.depth - b.depth);
  for (const p of containers) {
    const c = p.container;
    const style = CONTAINER_STYLE[c.kind];
    const dash = style.dashed ? ' stroke-dasharray="6 4"' : '';
    const badgeW = c.severity ? badgeWidth(badgeText(c.severity, c.findings)) + 8 : 0;
    const title = fitText(c.label, TITLE_FONT, p.w - 20 - badgeW);
    let out =
      `<g><rect x="${r(p.x)}" y="${r(p.y)}" width="${r(p.w)}" height="${r(p.h)}" fill="${style.fill}" stroke="${style.stroke}" stroke-width="1.5"${dash}/>` +
      `<line x1="${r(p.x)}" y1="${r(p.y + HEADER_H)}" x2="${r(p.x + p.w)}" y2="${r(p.y + HEADER_H)}" stroke="${style.stroke}" stroke-opacity="0.35"/>` +
      `<text x="${r(p.x + 10)}" y="${r(p.y + 17)}" font-size="${TITLE_FONT}" font-weight="bold" fill="${style.stroke}">${escapeXml(title)}</text>`;
    if (c.severity) out += badge(p.x + 10 + Math.ceil(title.length * 0.6021 * TITLE_FONT) + 8, p.y + 5, c.severity, c.findings);
    yield out + '</g>\n';
  }
  yield '<g fill="none" stroke="#5f6b7a" stroke-opacity="0.55" stroke-width="1.2">\n';
  for (const e of d.edges) {
    if (e.points.length < 2) continue;
    yield `<polyline points="${e.points.map(([x, y]) => `${r(x)},${r(y)}`).join(' ')}"/>\n`;
  }
  yield '</g>\n';
  for (const b of d.boxes) {
    const n = b.node;
    const cat = CATEGORY_STYLE[categoryOf(n.type)];
    const labels = boxLabels(n.name, n.type, n.severity, n.findings);
    let out =
      `<g><rect x="${r(b.x)}" y="${r(b.y)}" width="${BOX_W}" height="${BOX_H}" rx="5" fill="${cat.fill}" stroke="${cat.stroke}" stroke-width="1.5"/>` +
      `<rect x="${r(b.x)}" y="${r(b.y)}" width="${STRIPE_W}" height="${BOX_H}" rx="2" fill="${cat.stroke}"/>` +
      `<text x="${r(b.x + STRIPE_W + 8)}" y="${r(b.y + 21)}" font-size="${NAME_FONT}" font-weight="bold" fill="#1b1f24">${escapeXml(labels.name)}</text>` +
      `<text x="${r(b.x + STRIPE_W + 8)}" y="${r(b.y + 40)}" font-size="${TYPE_FONT}" fill="#4a5563">${escapeXml(labels.type)}</text>`;
    if (labels.badge && n.severity) out += badge(b.x + BOX_W - 8 - badgeWidth(labels.badge), b.y + BOX_H - BADGE_H - 6, n.severity, n.findings);
    yield out + '</g>\n';
  }
  yield '</svg>\n';
}
