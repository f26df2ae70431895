/**
 * Locates blocks and their top-level items in Terraform (HCL native syntax) text, with exact byte
 * offsets, so that a fix can edit one resource and leave every other byte of the file untouched.
 *
 * This is NOT an HCL parser: it never evaluates or validates expressions. It scans the structure
 * that decides where blocks and attributes begin and end:
 * - bodies: `name = <expression>` attributes and `type "label" ident { … }` blocks, nested to any
 *   depth, including single-line blocks (`versioning { enabled = true }`);
 * - expressions, which it skips by balancing `(` `[` `{` and stopping at the first line break (or `}`
 *   of the enclosing block) at depth zero, so multi-line lists, maps, `for` expressions and function
 *   calls are one attribute;
 * - quoted strings with backslash escapes, `$${`/`%%{` literal escapes and `${ … }`/`%{ … }` template
 *   sequences (whose expressions may hold further strings and braces);
 * - heredocs `<<EOT` and `<<-EOT`, whose closing marker may be indented, with template sequences;
 * - comments `#`, `//` (to the end of the line) and `/* … *\/`;
 * - LF and CRLF line breaks, and a last line with no line break.
 * Identifiers (names, unquoted labels) are taken as ASCII letters, digits, `_` and `-`; Unicode
 * identifiers are not recognised. It does not handle the JSON syntax (`*.tf.json`), and accepts some
 * text Terraform would reject (an expression is never checked). Text it cannot follow (an unterminated string,
 * heredoc or comment, an unbalanced `}`, an item that does not start with an identifier) raises
 * HclScanError rather than guessing, so callers can fall back to something safe.
 */

export class HclScanError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
    this.name = 'HclScanError';
  }
}

/** One item of a body. Offsets index the scanned text; `end` is exclusive. */
export interface HclItem {
  kind: 'attribute' | 'block';
  /** Attribute name, or block type (`resource`, `ingress`, …). */
  name: string;
  /** Decoded labels of a block (`["aws_s3_bucket", "logs"]`); empty for attributes. */
  labels: string[];
  /** Offset of each label's first and just-past-last character, quotes included. */
  labelSpans: Array<[number, number]>;
  /** Offset of the name's first character. */
  start: number;
  /** Just past the attribute's value or the block's closing brace (trailing comments excluded). */
  end: number;
  /** Start of the line holding `start`. */
  lineStart: number;
  /** Just past the line break that ends the item's last line (or the end of the text). */
  lineEnd: number;
  /** Blocks only: offsets of the opening and closing braces. */
  open: number;
  close: number;
  /** Blocks only: the items of the block's body. */
  items: HclItem[];
}

const IDENT_START = /[A-Za-z_]/;
const IDENT_CHAR = /[A-Za-z0-9_-]/;

/** The top-level items of a file (blocks and attributes), in order. */
export function scanBody(text: string): HclItem[] {
  const scanner = new Scanner(text);
  return scanner.body(false);
}

/** The top-level `resource "<type>" "<name>" { … }` block, or undefined. Throws HclScanError. */
export function findResource(text: string, type: string, name: string): HclItem | undefined {
  return scanBody(text).find((item) => item.kind === 'block' && item.name === 'resource' && item.labels[0] === type && item.labels[1] === name);
}

/** Every top-level `resource` block. Throws HclScanError. */
export function resourceBlocks(text: string): HclItem[] {
  return scanBody(text).filter((item) => item.kind === 'block' && item.name === 'resource' && item.labels.length === 2);
}

/** Start of the line holding `offset`. */
export function lineStartOf(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** Just past the line break ending the line that holds `offset`, or the end of the text. */
export function lineEndOf(text: string, offset: number): number {
  const nl = text.indexOf('\n', offset);
  return nl < 0 ? text.length : nl + 1;
}

class Scanner {
  private pos = 0;

  constructor(private readonly text: string) {}

  /** Items until the end of the text (top level) or the `}` closing the enclosing block. */
  body(nested: boolean): HclItem[] {
    const items: HclItem[] = [];
    for (;;) {
      this.skipBlank(true);
      if (this.pos >= this.text.length) {
        if (nested) throw new HclScanError('unterminated block', this.pos);
        return items;
      }
      if (this.text[this.pos] === '}') {
        if (!nested) throw new HclScanError('unbalanced "}"', this.pos);
        return items;
      }
      items.push(this.item());
    }
  }

  private item(): HclItem {
    const start = this.pos;
    const name = this.identifier();
    if (name === undefined) throw new HclScanError('expected an attribute name or block type', start);
    this.skipBlank(false);
    const base = { name, start, lineStart: lineStartOf(this.text, start), labels: [], labelSpans: [], open: -1, close: -1, items: [] };
    if (this.text[this.pos] === '=' && this.text[this.pos + 1] !== '=' && this.text[this.pos + 1] !== '>') {
      this.pos++;
      const end = this.expression();
      return { ...base, kind: 'attribute', end, lineEnd: lineEndOf(this.text, end) };
    }
    const labels: string[] = [];
    const labelSpans: Array<[number, number]> = [];
    while (this.text[this.pos] !== '{') {
      const at = this.pos;
      if (this.text[at] === '"') {
        this.quoted();
        labels.push(decodeLabel(this.text.slice(at + 1, this.pos - 1)));
      } else {
        const label = this.identifier();
        if (label === undefined) throw new HclScanError(`expected "=", a label or "{" after "${name}"`, at);
        labels.push(label);
      }
      labelSpans.push([at, this.pos]);
      this.skipBlank(false);
    }
    const open = this.pos++;
    const items = this.body(true);
    const close = this.pos++;
    return { ...base, kind: 'block', labels, labelSpans, open, close, items, end: close + 1, lineEnd: lineEndOf(this.text, close) };
  }

  private identifier(): string | undefined {
    const start = this.pos;
    if (!IDENT_START.test(this.text[start] ?? '')) return undefined;
    this.pos++;
    while (IDENT_CHAR.test(this.text[this.pos] ?? '')) this.pos++;
    return this.text.slice(start, this.pos);
  }

  /** Skips spaces, tabs, CR, comments and (when `lines`) line breaks. Line comments stop before their line break. */
  private skipBlank(lines: boolean): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t[this.pos];
      if (c === ' ' || c === '\t' || c === '\r' || c === '\uFEFF' || (lines && c === '\n')) this.pos++;
      else if (c === '#' || (c === '/' && t[this.pos + 1] === '/')) this.lineComment();
      else if (c === '/' && t[this.pos + 1] === '*') this.blockComment();
      else return;
    }
  }

  private lineComment(): void {
    const nl = this.text.indexOf('\n', this.pos);
    this.pos = nl < 0 ? this.text.length : nl;
  }

  private blockComment(): void {
    const close = this.text.indexOf('*/', this.pos + 2);
    if (close < 0) throw new HclScanError('unterminated /* comment', this.pos);
    this.pos = close + 2;
  }

  /**
   * Skips an attribute's expression; returns the offset just past its last significant character.
   * It ends at a line break, a line comment or the enclosing block's `}` met at bracket depth zero.
   */
  private expression(): number {
    const t = this.text;
    let depth = 0;
    let end = this.pos;
    while (this.pos < t.length) {
      const c = t[this.pos]!;
      if (depth === 0 && (c === '\n' || c === '#' || (c === '/' && t[this.pos + 1] === '/'))) break;
      if (depth === 0 && c === '}') break;
      if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
        this.pos++;
        continue;
      }
      if (c === '#' || (c === '/' && t[this.pos + 1] === '/')) {
        this.lineComment();
        continue;
      }
      if (c === '/' && t[this.pos + 1] === '*') {
        this.blockComment();
        continue;
      }
      if (c === '"') this.quoted();
      else if (c === '<' && t[this.pos + 1] === '<' && this.heredocAhead()) this.heredoc();
      else {
        if (c === '(' || c === '[' || c === '{') depth++;
        else if (c === ')' || c === ']' || c === '}') depth--;
        this.pos++;
      }
      if (depth < 0) throw new HclScanError(`unbalanced "${c}"`, this.pos - 1);
      end = this.pos;
    }
    if (depth > 0) throw new HclScanError('unterminated expression', this.pos);
    return end;
  }

  /** Skips a template sequence's expression (`${ … }` or `%{ … }`), the `${`/`%{` already consumed. */
  private templateSequence(): void {
    const t = this.text;
    let depth = 0;
    while (this.pos < t.length) {
      const c = t[this.pos]!;
      if (c === '#' || (c === '/' && t[this.pos + 1] === '/')) this.lineComment();
      else if (c === '/' && t[this.pos + 1] === '*') this.blockComment();
      else if (c === '"') this.quoted();
      else if (c === '<' && t[this.pos + 1] === '<' && this.heredocAhead()) this.heredoc();
      else {
        this.pos++;
        if (c === '(' || c === '[' || c === '{') depth++;
        else if (c === ')' || c === ']') depth--;
        else if (c === '}' && depth-- === 0) return;
      }
    }
    throw new HclScanError('unterminated template sequence', this.pos);
  }

  /** Skips a quoted template string, starting on its opening quote. */
  private quoted(): void {
    const t = this.text;
    const start = this.pos++;
    while (this.pos < t.length) {
      const c = t[this.pos]!;
      if (c === '"') {
        this.pos++;
        return;
      }
      if (c === '\n') break;
      this.templateChar(c, true);
    }
    throw new HclScanError('unterminated string', start);
  }

  /**
   * Advances over one template character or sequence (shared by quoted strings and heredocs).
   * Backslash escapes exist only in quoted strings: in a heredoc `\` is an ordinary character.
   */
  private templateChar(c: string, escapes: boolean): void {
    const t = this.text;
    const next = t[this.pos + 1];
    if (escapes && c === '\\') this.pos += 2;
    else if ((c === '$' || c === '%') && next === c && t[this.pos + 2] === '{') this.pos += 3;
    else if ((c === '$' || c === '%') && next === '{') {
      this.pos += 2;
      this.templateSequence();
    } else this.pos++;
  }

  private heredocAhead(): boolean {
    return /^<<-?[A-Za-z_][A-Za-z0-9_-]*\r?\n/.test(this.text.slice(this.pos, this.pos + 300));
  }

  /** Skips a heredoc from `<<` through its closing marker (which may be indented, `<<` or `<<-`). */
  private heredoc(): void {
    const t = this.text;
    const start = this.pos;
    const m = /^<<-?([A-Za-z_][A-Za-z0-9_-]*)\r?\n/.exec(t.slice(this.pos, this.pos + 300))!;
    const marker = m[1]!;
    this.pos += m[0].length;
    let atLineStart = true;
    while (this.pos < t.length) {
      if (atLineStart) {
        const lineEnd = lineEndOf(t, this.pos);
        const line = t.slice(this.pos, lineEnd).replace(/\r?\n$/, '');
        if (line.trimStart() === marker) {
          this.pos += line.length;
          return;
        }
      }
      const c = t[this.pos]!;
      const before = this.pos;
      this.templateChar(c, false);
      // A marker only counts at the start of a line of literal text, not inside a ${ … } sequence.
      atLineStart = c === '\n' && this.pos === before + 1;
    }
    throw new HclScanError(`unterminated heredoc <<${marker}`, start);
  }
}

/** A quoted label's value. Labels are plain names in practice; an escape JSON cannot read stays raw. */
function decodeLabel(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}
