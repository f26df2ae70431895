import type { PdfText } from './pdf-text.js';

/**
 * The report's charts, drawn as PDF vector graphics with pdfkit's paths: they print sharp at any
 * zoom and their labels are text a reader can search and copy.
 */

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Bar {
  label: string;
  value: number;
  /** Text at the end of the bar (the value by default). */
  valueLabel?: string;
  color: string;
}

export interface Series {
  name: string;
  color: string;
  points: Array<{ at: Date; value: number }>;
}

const AXIS = '#8a94a3';
const GRID = '#e3e7ec';
const LABEL = '#5a6472';

function chartTitle(text: PdfText, box: Box, title: string): number {
  text.draw(text.fit(title, box.width, { face: 'bold', size: 9.5 }), box.x, box.y, { face: 'bold', size: 9.5, color: '#1b1f24' });
  return box.y + 16;
}

/** Horizontal bars, one per row, scaled to `max` (the largest value when absent). */
export function barChart(doc: PDFKit.PDFDocument, text: PdfText, box: Box, title: string, bars: Bar[], options: { max?: number; labelShare?: number } = {}): void {
  const top = chartTitle(text, box, title);
  const labelWidth = box.width * (options.labelShare ?? 0.3);
  const valueWidth = 40;
  const area = { x: box.x + labelWidth, width: box.width - labelWidth - valueWidth };
  const scale = options.max ?? Math.max(1, ...bars.map((b) => b.value));
  const rowHeight = Math.min(18, (box.y + box.height - top) / Math.max(1, bars.length));
  const barHeight = rowHeight * 0.62;
  // Grid at quarters of the scale, so bars can be read against it.
  for (let i = 0; i <= 4; i++) {
    const x = area.x + (area.width * i) / 4;
    doc
      .moveTo(x, top - 2)
      .lineTo(x, top + rowHeight * bars.length)
      .lineWidth(0.5)
      .strokeColor(i === 0 ? AXIS : GRID)
      .stroke();
  }
  bars.forEach((bar, i) => {
    const y = top + i * rowHeight;
    const label = text.fit(bar.label, labelWidth - 6, { size: 8 });
    text.draw(label, box.x, y + (rowHeight - 8 * 1.32) / 2, { size: 8, color: LABEL });
    const width = scale === 0 ? 0 : (area.width * Math.max(0, bar.value)) / scale;
    if (width > 0)
      doc
        .rect(area.x, y + (rowHeight - barHeight) / 2, width, barHeight)
        .fillColor(bar.color)
        .fill();
    text.draw(bar.valueLabel ?? String(bar.value), area.x + width + 4, y + (rowHeight - 8 * 1.32) / 2, { face: 'bold', size: 8, color: '#1b1f24' });
  });
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * Scores (0 to 100) over a sequence of moments, one line per series, with a legend above. Moments are
 * evenly spaced (audit runs, not calendar time: two runs a minute apart stay apart); the first and
 * last dates are printed under the axis.
 */
export function lineChart(doc: PDFKit.PDFDocument, text: PdfText, box: Box, title: string, series: Series[]): void {
  let top = chartTitle(text, box, title);
  // Legend: a swatch and the series' name, left to right, wrapping onto further rows.
  let lx = box.x;
  for (const s of series) {
    const name = text.fit(s.name, 160, { size: 7.5 });
    const width = 13 + text.width(name, { size: 7.5 }) + 14;
    if (lx > box.x && lx + width > box.x + box.width) {
      lx = box.x;
      top += 12;
    }
    doc
      .rect(lx, top + 3.5, 10, 3)
      .fillColor(s.color)
      .fill();
    text.draw(name, lx + 13, top, { size: 7.5, color: LABEL });
    lx += width;
  }
  top += 16;
  const axisWidth = 26;
  const plot = { x: box.x + axisWidth, y: top, width: box.width - axisWidth - 6, height: box.y + box.height - top - 16 };
  for (const tick of [0, 25, 50, 75, 100]) {
    const y = plot.y + plot.height - (plot.height * tick) / 100;
    doc
      .moveTo(plot.x, y)
      .lineTo(plot.x + plot.width, y)
      .lineWidth(0.5)
      .strokeColor(tick === 0 ? AXIS : GRID)
      .stroke();
    const label = `${tick}%`;
    text.draw(label, plot.x - 4 - text.width(label, { size: 7 }), y - 4.5, { size: 7, color: LABEL });
  }
  const moments = [...new Set(series.flatMap((s) => s.points.map((p) => p.at.getTime())))].sort((a, b) => a - b);
  const index = new Map(moments.map((t, i) => [t, i]));
  const xOf = (t: number) => (moments.length === 1 ? plot.x + plot.width / 2 : plot.x + 6 + ((plot.width - 12) * index.get(t)!) / (moments.length - 1));
  const yOf = (v: number) => plot.y + plot.height - (plot.height * Math.max(0, Math.min(100, v))) / 100;
  for (const s of series) {
    const points = [...s.points].sort((a, b) => a.at.getTime() - b.at.getTime());
    points.forEach((p, i) => {
      if (i === 0) doc.moveTo(xOf(p.at.getTime()), yOf(p.value));
      else doc.lineTo(xOf(p.at.getTime()), yOf(p.value));
    });
    if (points.length > 1) doc.lineWidth(1.4).strokeColor(s.color).stroke();
    for (const p of points) doc.circle(xOf(p.at.getTime()), yOf(p.value), 1.8).fillColor(s.color).fill();
  }
  // Dates of the first and last moment under the axis.
  const labelY = plot.y + plot.height + 4;
  const first = day(new Date(moments[0]!));
  text.draw(first, plot.x, labelY, { size: 7, color: LABEL });
  if (moments.length > 1) {
    const last = day(new Date(moments.at(-1)!));
    text.draw(last, plot.x + plot.width - text.width(last, { size: 7 }), labelY, { size: 7, color: LABEL });
  }
}
