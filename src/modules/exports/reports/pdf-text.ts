import type { FontFace, ReportFonts } from './pdf-fonts.js';

/** How a piece of text is set. */
export interface TextStyle {
  face?: FontFace;
  size: number;
  color?: string;
}

/** Ideographs, kana and Hangul: a line may break between any two of them. */
const CJK = /[\u2E80-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFFEF]/u;
/** A line may break after these (resource ids and ARNs have no spaces: arn:aws:…/name). */
const BREAK_AFTER = new Set(['-', '/', ':', '.', '_', ',', ';', '|', '=', '@', '+', ')', ']', '}']);

/**
 * Text set with the report's fonts (ReportFonts picks a font per run of characters): its width, and
 * lines wrapped or cut to a width, so a cell never runs into the next column.
 */
export class PdfText {
  constructor(
    private readonly doc: PDFKit.PDFDocument,
    private readonly fonts: ReportFonts,
  ) {}

  width(text: string, style: TextStyle): number {
    let width = 0;
    for (const run of this.fonts.runs(text, style.face ?? 'regular')) width += this.doc.font(run.font).fontSize(style.size).widthOfString(run.text);
    return width;
  }

  /** Draws one line at (x, y) (its top), run by run on one baseline; no wrapping, no page break. */
  draw(text: string, x: number, y: number, style: TextStyle): void {
    const face = style.face ?? 'regular';
    const baseline = y + this.fonts.ascent(face) * style.size;
    this.doc.fillColor(style.color ?? '#1b1f24');
    let at = x;
    for (const run of this.fonts.runs(text, face)) {
      this.doc.font(run.font).fontSize(style.size);
      this.doc.text(run.text, at, baseline, { lineBreak: false, baseline: 'alphabetic' });
      at += this.doc.widthOfString(run.text);
    }
  }

  /** Line height of a size (the body font's ascent to descent plus a little leading). */
  lineHeight(size: number): number {
    return size * 1.32;
  }

  /** The text cut with an ellipsis to `width`. */
  fit(text: string, width: number, style: TextStyle): string {
    const clean = text.replace(/\s+/g, ' ');
    if (this.width(clean, style) <= width) return clean;
    const chars = [...clean];
    let lo = 0;
    let hi = chars.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (this.width(`${chars.slice(0, mid).join('')}…`, style) <= width) lo = mid;
      else hi = mid - 1;
    }
    return `${chars.slice(0, lo).join('').trimEnd()}…`;
  }

  /**
   * The text in lines no wider than `width`: broken at spaces, after the separators of identifiers
   * (`-`, `/`, `:`, …), between CJK characters, and inside a word only when it alone is wider than
   * the line. Past `maxLines` the last line ends with an ellipsis.
   */
  wrap(text: string, width: number, style: TextStyle, maxLines = Infinity): string[] {
    const lines: string[] = [];
    for (const paragraph of text.split(/\r?\n/)) {
      // Widths add up token by token (kerning across a break opportunity is negligible).
      let line = '';
      let lineWidth = 0;
      for (const token of tokens(paragraph.replace(/\s+/g, ' ').trim())) {
        const piece = line === '' ? token.trimStart() : token;
        if (lineWidth + this.width(piece.trimEnd(), style) <= width) {
          line += piece;
          lineWidth += this.width(piece, style);
          continue;
        }
        if (line.trim() !== '') lines.push(line.trimEnd());
        // A token wider than the line is cut into pieces that fit.
        let rest = [...token.trimStart()];
        while (this.width(rest.join('').trimEnd(), style) > width) {
          let n = 1;
          while (n < rest.length && this.width(rest.slice(0, n + 1).join(''), style) <= width) n++;
          lines.push(rest.slice(0, n).join(''));
          rest = rest.slice(n);
        }
        line = rest.join('');
        lineWidth = this.width(line, style);
      }
      if (line.trim() !== '' || lines.length === 0) lines.push(line.trimEnd());
    }
    if (lines.length > maxLines) {
      const kept = lines.slice(0, maxLines);
      const last = this.fit(`${kept[maxLines - 1]!} ${lines.slice(maxLines).join(' ')}`, width, style);
      kept[maxLines - 1] = last.endsWith('…') ? last : `${last}…`;
      return kept;
    }
    return lines;
  }
}

/** Pieces between break opportunities; each keeps its trailing space or separator. */
function tokens(text: string): string[] {
  const out: string[] = [];
  const chars = [...text];
  let current = '';
  chars.forEach((char, i) => {
    current += char;
    const next = chars[i + 1];
    if (next === undefined || next === ' ') return;
    if (char === ' ' || BREAK_AFTER.has(char) || CJK.test(char) || CJK.test(next)) {
      out.push(current);
      current = '';
    }
  });
  if (current) out.push(current);
  return out;
}
