import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

/** One page of a PDF as text: its lines top to bottom, each line's pieces left to right. */
export interface PdfPage {
  lines: string[];
  text: string;
  /**
   * The text of each left edge, top to bottom, joined without separators: a table cell's wrapped
   * lines start at its column's edge, so a value wrapped over several lines reads whole here.
   */
  columns: string[];
  /** Every piece of text with its position (points from the left, baseline from the bottom) and width. */
  items: Array<{ str: string; x: number; y: number; width: number }>;
}

interface TextItem {
  str: string;
  transform: number[];
  width: number;
}

/**
 * The text of a PDF as PDF.js (Mozilla's reader) extracts it, through each font's ToUnicode map:
 * what a reader copies out of the file. Pieces on one baseline form a line; pieces that touch (a
 * run of Latin then CJK text) join without a space, pieces apart (table cells) with one.
 */
export async function pdfPages(pdf: Buffer): Promise<PdfPage[]> {
  const document = await getDocument({ data: new Uint8Array(pdf), verbosity: 0, useSystemFonts: false, isEvalSupported: false }).promise;
  const pages: PdfPage[] = [];
  try {
    for (let n = 1; n <= document.numPages; n++) {
      const content = await (await document.getPage(n)).getTextContent();
      const rows = new Map<number, TextItem[]>();
      for (const item of content.items as TextItem[]) {
        if (!('str' in item) || item.str === '') continue;
        const y = Math.round(item.transform[5]! * 2) / 2;
        const key = [...rows.keys()].find((k) => Math.abs(k - y) <= 1) ?? y;
        rows.set(key, [...(rows.get(key) ?? []), item]);
      }
      const lines = [...rows.entries()]
        .sort((a, b) => b[0] - a[0])
        .map(([, items]) => {
          const sorted = items.sort((a, b) => a.transform[4]! - b.transform[4]!);
          let line = '';
          let end = -Infinity;
          for (const item of sorted) {
            const x = item.transform[4]!;
            line += line !== '' && x - end > 1.5 ? ` ${item.str}` : item.str;
            end = x + item.width;
          }
          return line;
        });
      const edges = new Map<number, TextItem[]>();
      for (const items of rows.values()) {
        for (const item of items) {
          const x = Math.round(item.transform[4]!);
          edges.set(x, [...(edges.get(x) ?? []), item]);
        }
      }
      const columns = [...edges.values()].map((items) =>
        items
          .sort((a, b) => b.transform[5]! - a.transform[5]!)
          .map((i) => i.str)
          .join(''),
      );
      const items = [...rows.values()].flat().map((i) => ({ str: i.str, x: i.transform[4]!, y: i.transform[5]!, width: i.width }));
      pages.push({ lines, text: lines.join('\n'), columns, items });
    }
  } finally {
    await document.destroy();
  }
  return pages;
}

/** The whole PDF's text, pages joined. */
export async function pdfAllText(pdf: Buffer): Promise<string> {
  return (await pdfPages(pdf)).map((p) => p.text).join('\n');
}
