import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { brotliDecompressSync } from 'node:zlib';
import type * as Fontkit from 'fontkit';
import { projectPath } from '../../../platform/paths.js';

/**
 * The report's fonts (content/fonts/README.md): Noto Sans for Latin, Greek and Cyrillic, and a Noto
 * Sans CJK subset, read (and decompressed) only when a text has a character Noto Sans lacks. The
 * PDF's standard fonts print Latin-1 only: a Chinese or Greek resource name came out as garbage.
 */

export type FontFace = 'regular' | 'bold';

/** A stretch of text that one font prints. */
export interface TextRun {
  font: string;
  text: string;
}

interface FontFile {
  data: Buffer;
  font: Fontkit.Font;
}

const require = createRequire(import.meta.url);
const files = new Map<string, FontFile>();

/** Each font file is read once per process; pdfkit embeds only the glyphs a document uses. */
function fontFile(name: string): FontFile {
  let file = files.get(name);
  if (!file) {
    const raw = readFileSync(projectPath('content', 'fonts', name));
    const data = name.endsWith('.br') ? brotliDecompressSync(raw) : raw;
    const fontkit = require('fontkit') as typeof Fontkit;
    file = { data, font: fontkit.create(data) as Fontkit.Font };
    files.set(name, file);
  }
  return file;
}

const BODY: Record<FontFace, string> = { regular: 'NotoSans-Regular.ttf', bold: 'NotoSans-Bold.ttf' };
const CJK = 'NotoSansCJKsc-Regular.otf.br';

/** Font names as registered in a document. */
const NAMES: Record<FontFace | 'cjk', string> = { regular: 'report-regular', bold: 'report-bold', cjk: 'report-cjk' };

/** The fonts of one document: the body fonts at once, the CJK font when a text first needs it. */
export class ReportFonts {
  private cjkRegistered = false;

  constructor(private readonly doc: PDFKit.PDFDocument) {
    for (const face of ['regular', 'bold'] as const) doc.registerFont(NAMES[face], fontFile(BODY[face]).data);
  }

  /**
   * The body font's ascent as a fraction of the size: where a line's baseline lies below its top.
   * Runs are set on that baseline, so CJK text (whose font has a smaller ascent) lines up with Latin.
   */
  ascent(face: FontFace): number {
    const font = fontFile(BODY[face]).font;
    return font.ascent / font.unitsPerEm;
  }

  /** The registered name of a body face, for pdfkit's `font()`. */
  name(face: FontFace): string {
    return NAMES[face];
  }

  private cjk(): string {
    if (!this.cjkRegistered) {
      this.doc.registerFont(NAMES.cjk, fontFile(CJK).data);
      this.cjkRegistered = true;
    }
    return NAMES.cjk;
  }

  /**
   * The text split into runs, each in the first font that has its characters (the face's Noto Sans,
   * then Noto Sans CJK). A character that the current run's font has stays in it, so spaces and
   * punctuation inside CJK text do not switch fonts. A character no font has stays in the body font,
   * which prints its empty box: never another character.
   */
  runs(text: string, face: FontFace): TextRun[] {
    const body = fontFile(BODY[face]).font;
    const out: TextRun[] = [];
    let current: TextRun | null = null;
    let currentFont: Fontkit.Font = body;
    for (const char of text) {
      const cp = char.codePointAt(0)!;
      if (current && currentFont.hasGlyphForCodePoint(cp)) {
        current.text += char;
        continue;
      }
      let font = NAMES[face];
      let fk = body;
      if (!body.hasGlyphForCodePoint(cp)) {
        const cjk = fontFile(CJK).font;
        if (cjk.hasGlyphForCodePoint(cp)) {
          font = this.cjk();
          fk = cjk;
        }
      }
      if (current && current.font === font) {
        current.text += char;
        continue;
      }
      current = { font, text: char };
      currentFont = fk;
      out.push(current);
    }
    return out;
  }
}
