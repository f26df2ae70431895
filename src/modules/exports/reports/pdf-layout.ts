import { ReportFonts } from './pdf-fonts.js';
import { PdfText, type TextStyle } from './pdf-text.js';

export const INK = '#1b1f24';
export const MUTED = '#5a6472';
export const RULE = '#d5dae1';
export const SHADE = '#f3f5f8';

/** A piece of text in a table cell, wrapped to the column (at most `maxLines` lines). */
export interface Paragraph extends Partial<TextStyle> {
  text: string;
  maxLines?: number;
}

export interface Column {
  title: string;
  /** Fraction of the text width. */
  share: number;
  align?: 'left' | 'right';
}

export type Cell = Paragraph | Paragraph[];

const CELL_PAD = 3;
const TABLE_SIZE = 8;

/**
 * Page flow of the report: a cursor that moves down the page and starts a new one when what comes
 * next does not fit (a table row is never split, and a table's header is repeated on each page).
 * Pages are buffered so the footer can say "Page n of N" once the last one exists.
 */
export class PdfLayout {
  readonly text: PdfText;
  readonly fonts: ReportFonts;
  y: number;

  constructor(readonly doc: PDFKit.PDFDocument) {
    this.fonts = new ReportFonts(doc);
    this.text = new PdfText(doc, this.fonts);
    this.y = this.top;
  }

  get left(): number {
    return this.doc.page.margins.left;
  }
  get top(): number {
    return this.doc.page.margins.top;
  }
  get width(): number {
    return this.doc.page.width - this.doc.page.margins.left - this.doc.page.margins.right;
  }
  get bottom(): number {
    return this.doc.page.height - this.doc.page.margins.bottom;
  }

  newPage(): void {
    this.doc.addPage();
    this.y = this.top;
  }

  /** Starts a new page unless `height` more fits on this one. */
  ensure(height: number): void {
    if (this.y + height > this.bottom) this.newPage();
  }

  space(height: number): void {
    this.y += height;
  }

  /** A section heading (level 1) or sub-heading (level 2), kept with at least `keep` points of what follows. */
  heading(title: string, level: 1 | 2 = 1, keep = 60): void {
    const size = level === 1 ? 14 : 10.5;
    this.ensure(size * 2 + keep);
    this.y += level === 1 ? 14 : 8;
    for (const line of this.text.wrap(title, this.width, { face: 'bold', size })) {
      this.text.draw(line, this.left, this.y, { face: 'bold', size, color: INK });
      this.y += this.text.lineHeight(size);
    }
    if (level === 1) {
      this.doc
        .moveTo(this.left, this.y + 1)
        .lineTo(this.left + this.width, this.y + 1)
        .lineWidth(0.8)
        .strokeColor(RULE)
        .stroke();
      this.y += 6;
    } else this.y += 3;
  }

  /** Wrapped text across the page (or `width` from `x`), breaking pages between lines. */
  paragraph(text: string, style: TextStyle, x = this.left, width = this.width): void {
    for (const line of this.text.wrap(text, width, style)) {
      this.ensure(this.text.lineHeight(style.size));
      this.text.draw(line, x, this.y, style);
      this.y += this.text.lineHeight(style.size);
    }
    this.y += 2;
  }

  /** Label and value pairs: the label in a column of its own, the value wrapped beside it. */
  keyValues(rows: Array<[label: string, value: string]>, labelShare = 0.3): void {
    const labelWidth = this.width * labelShare;
    for (const [label, value] of rows) {
      const style = { size: 9, color: INK };
      const lines = this.text.wrap(value, this.width - labelWidth, style);
      const labelLines = this.text.wrap(label, labelWidth - 8, { face: 'bold', size: 9 });
      const height = Math.max(lines.length, labelLines.length) * this.text.lineHeight(9);
      this.ensure(Math.min(height, this.bottom - this.top));
      const top = this.y;
      labelLines.forEach((line, i) => this.text.draw(line, this.left, top + i * this.text.lineHeight(9), { face: 'bold', size: 9, color: MUTED }));
      for (const line of lines) {
        this.ensure(this.text.lineHeight(9));
        this.text.draw(line, this.left + labelWidth, this.y, style);
        this.y += this.text.lineHeight(9);
      }
      this.y = Math.max(this.y, top + labelLines.length * this.text.lineHeight(9)) + 3;
    }
  }

  /**
   * A table whose cells wrap within their column; each row is as tall as its tallest cell and never
   * split across pages. `rows` may be produced in batches: call it again with `continued` to append.
   */
  table(columns: Column[], rows: Cell[][], continued = false): void {
    const widths = columns.map((c) => c.share * this.width);
    const header = () => {
      const height = this.text.lineHeight(TABLE_SIZE) + CELL_PAD * 2;
      this.doc.rect(this.left, this.y, this.width, height).fillColor(SHADE).fill();
      let x = this.left;
      columns.forEach((c, i) => {
        const title = this.text.fit(c.title, widths[i]! - CELL_PAD * 2, { face: 'bold', size: TABLE_SIZE });
        const dx = c.align === 'right' ? widths[i]! - CELL_PAD - this.text.width(title, { face: 'bold', size: TABLE_SIZE }) : CELL_PAD;
        this.text.draw(title, x + dx, this.y + CELL_PAD, { face: 'bold', size: TABLE_SIZE, color: MUTED });
        x += widths[i]!;
      });
      this.y += height;
    };
    if (!continued) {
      this.ensure(60);
      header();
    }
    for (const row of rows) {
      const cells = row.map((cell, i) => {
        const paragraphs = Array.isArray(cell) ? cell : [cell];
        return paragraphs.map((p) => {
          const style: TextStyle = { ...p, size: p.size ?? TABLE_SIZE };
          return { style, lines: p.text === '' ? [] : this.text.wrap(p.text, widths[i]! - CELL_PAD * 2, style, p.maxLines ?? 8) };
        });
      });
      const height = Math.max(...cells.map((ps) => ps.reduce((h, p) => h + p.lines.length * this.text.lineHeight(p.style.size), 0))) + CELL_PAD * 2;
      if (this.y + height > this.bottom) {
        this.newPage();
        header();
      }
      let x = this.left;
      cells.forEach((paragraphs, i) => {
        let y = this.y + CELL_PAD;
        for (const p of paragraphs) {
          for (const line of p.lines) {
            const dx = columns[i]!.align === 'right' ? widths[i]! - CELL_PAD - this.text.width(line, p.style) : CELL_PAD;
            this.text.draw(line, x + dx, y, p.style);
            y += this.text.lineHeight(p.style.size);
          }
        }
        x += widths[i]!;
      });
      this.y += height;
      this.doc
        .moveTo(this.left, this.y)
        .lineTo(this.left + this.width, this.y)
        .lineWidth(0.4)
        .strokeColor(RULE)
        .stroke();
    }
  }

  /** On every page: the report's name on the left, "Page n of N" on the right. */
  footers(label: string): void {
    const range = this.doc.bufferedPageRange();
    for (let i = range.start; i < range.start + range.count; i++) {
      this.doc.switchToPage(i);
      // The footer lies in the bottom margin: lift the margin so pdfkit does not start a page for it.
      const margin = this.doc.page.margins.bottom;
      this.doc.page.margins.bottom = 0;
      const y = this.doc.page.height - margin + 22;
      this.doc
        .moveTo(this.left, y - 6)
        .lineTo(this.left + this.width, y - 6)
        .lineWidth(0.5)
        .strokeColor(RULE)
        .stroke();
      const page = `Page ${i - range.start + 1} of ${range.count}`;
      const pageWidth = this.text.width(page, { size: 8 });
      this.text.draw(this.text.fit(label, this.width - pageWidth - 24, { size: 8 }), this.left, y, { size: 8, color: MUTED });
      this.text.draw(page, this.left + this.width - pageWidth, y, { size: 8, color: MUTED });
      this.doc.page.margins.bottom = margin;
    }
  }
}
