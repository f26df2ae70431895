/**
 * The two edits a Terraform fix makes to a file, done on the text so that every byte outside the
 * edited lines is kept (comments, layout, line breaks, a missing final line break):
 * - setAttributes: add or replace top-level attributes of one resource block;
 * - addBlocks: put new blocks right after the resource block (or in place of an existing one).
 * Inserted lines take the line break style and indentation of the lines around them.
 */
import { findResource, lineEndOf, lineStartOf, scanBody, type HclItem } from './hcl-blocks.js';
import { hclString, renderAttribute, type HclValue } from './hcl-values.js';

interface Edit {
  start: number;
  end: number;
  text: string;
}

export class ResourceNotFoundError extends Error {
  constructor(type: string, name: string) {
    super(`resource "${type}" "${name}" not found`);
    this.name = 'ResourceNotFoundError';
  }
}

/**
 * Sets `values` as top-level attributes of `resource "<type>" "<name>"`. An existing `key = …` is
 * replaced in place (whatever its value spans: list, map, heredoc), keeping its indentation and any
 * trailing comment. Nested blocks named like the attribute (`ingress { … }`, `dynamic "ingress" { … }`) are removed, with the
 * comment lines directly above them, and the attribute takes the first one's place: Terraform reads
 * such arguments either as blocks or as one attribute, never both. Otherwise the attribute is added
 * as the last line of the block, at the body's indentation.
 */
export function setAttributes(text: string, type: string, name: string, values: Record<string, HclValue>): string {
  for (const [key, value] of Object.entries(values)) {
    const block = findResource(text, type, name);
    if (!block) throw new ResourceNotFoundError(type, name);
    const eol = eolAt(text, block.start);
    const indent = bodyIndent(text, block);
    const line = renderAttribute(key, value, indent, eol);
    const matches = block.items.filter((item) => item.name === key || (item.kind === 'block' && item.name === 'dynamic' && item.labels[0] === key));
    const attribute = matches.find((item) => item.kind === 'attribute');
    if (matches.length === 0) {
      const padded = alignedLike(text, block, key) + line.slice(key.length);
      text = applyEdits(text, [insertion(text, block, indent + padded + eol, eol)]);
      continue;
    }
    const edits: Edit[] = [];
    const first = attribute ?? matches[0]!;
    for (const item of matches) {
      const range = aloneOnLines(text, item) ? [commentsAbove(text, block, item), item.lineEnd] : [item.start, item.end];
      if (item !== first) edits.push({ start: range[0]!, end: withBlankAfter(text, range[0]!, range[1]!), text: '' });
      else if (item.kind === 'attribute') {
        // Only the value changes: the name and its alignment padding stay as written.
        const valueStart = /^[^=]*=[ \t]*/.exec(text.slice(item.start, item.end))![0].length + item.start;
        edits.push({ start: valueStart, end: item.end, text: line.slice(key.length + 3) });
      } else if (range[1] === item.lineEnd) {
        edits.push({ start: range[0]!, end: range[1]!, text: text.slice(item.lineStart, item.start) + line + eol });
      } else edits.push({ start: item.start, end: item.end, text: line });
    }
    text = applyEdits(text, edits);
  }
  return text;
}

/**
 * Adds each top-level block of `snippet` for `resource "<type>" "<name>"`. A `resource` block whose
 * counterpart already exists (same type and name, or same type with an attribute referencing `ref`,
 * e.g. an `aws_s3_bucket_versioning` whose `bucket = aws_s3_bucket.logs.id`) replaces it, keeping the
 * existing name: a second one would be a duplicate resource, or two resources fighting over one
 * setting. Every other block is inserted after the resource block (then after the previous insertion),
 * separated by a blank line.
 */
export function addBlocks(text: string, type: string, name: string, snippet: string, ref: string): string {
  let anchor = findResource(text, type, name);
  if (!anchor) throw new ResourceNotFoundError(type, name);
  const eol = eolAt(text, anchor.start);
  for (const block of scanBody(snippet)) {
    let body = snippet.slice(block.lineStart, block.lineEnd);
    const isResource = block.name === 'resource' && block.labels.length === 2;
    const existing = isResource ? counterpart(text, block.labels[0]!, block.labels[1]!, ref, anchor) : undefined;
    if (existing) {
      const label = block.labelSpans[1]!;
      body = body.slice(0, label[0] - block.lineStart) + hclString(existing.labels[1]!) + body.slice(label[1] - block.lineStart);
    }
    body = body.replace(/\r?\n/g, eol);
    if (!body.endsWith(eol)) body += eol;
    if (existing) {
      const atEof = !text.slice(existing.start, existing.lineEnd).endsWith('\n');
      text = applyEdits(text, [{ start: existing.lineStart, end: existing.lineEnd, text: atEof ? body.slice(0, -eol.length) : body }]);
      anchor = findResource(text, type, name)!;
      continue;
    }
    const at: number = anchor.lineEnd;
    let insert: string;
    if (!text.slice(anchor.start, at).endsWith('\n'))
      insert = eol + eol + body.slice(0, -eol.length); // keep "no final line break"
    else insert = eol + body + (at < text.length && text.slice(at, lineEndOf(text, at)).trim() !== '' ? eol : '');
    text = applyEdits(text, [{ start: at, end: at, text: insert }]);
    anchor = isResource ? findResource(text, block.labels[0]!, block.labels[1]!)! : blockAfter(text, at);
  }
  return text;
}

function counterpart(text: string, type: string, name: string, ref: string, self: HclItem): HclItem | undefined {
  const candidates = scanBody(text).filter((b) => b.kind === 'block' && b.name === 'resource' && b.labels[0] === type && b.start !== self.start);
  const same = candidates.find((b) => b.labels[1] === name);
  if (same) return same;
  const escaped = ref.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const reference = new RegExp(`(?<![A-Za-z0-9_.-])${escaped}(?![A-Za-z0-9_-])`);
  return candidates.find((b) => b.items.some((i) => i.kind === 'attribute' && reference.test(text.slice(i.start, i.end))));
}

/** The first top-level block starting at or after `offset` (skipping the blank line inserted before it). */
function blockAfter(text: string, offset: number): HclItem {
  return scanBody(text).find((b) => b.start >= offset)!;
}

/**
 * `key` padded to the `=` column of the single-line attribute just above the closing brace, when it
 * fits there, so the added line joins that aligned run as `terraform fmt` would lay it out.
 */
function alignedLike(text: string, block: HclItem, key: string): string {
  const last = block.items[block.items.length - 1];
  const closeLine = lineStartOf(text, block.close);
  if (!last || last.kind !== 'attribute' || last.lineEnd !== closeLine || last.lineStart !== lineStartOf(text, last.end)) return key;
  // `name   =` is the name padded to `column` characters, then " =".
  const column = /^[^=]*=/.exec(text.slice(last.start, last.end))![0].length - 2;
  return key.length <= column ? key.padEnd(column) : key;
}

/** Where and what to insert so that `lines` become the block's last body lines. */
function insertion(text: string, block: HclItem, lines: string, eol: string): Edit {
  const closeLine = lineStartOf(text, block.close);
  if (closeLine > block.open && text.slice(closeLine, block.close).trim() === '') {
    return { start: closeLine, end: closeLine, text: lines };
  }
  const own = ownIndent(text, block);
  if (!text.slice(block.open, block.close).includes('\n')) {
    // A one-line block (`{}` or `{ a = 1 }`) holds at most one attribute: open it up over several lines.
    const inner = text.slice(block.open + 1, block.close).trim();
    const indent = bodyIndent(text, block);
    return { start: block.open, end: block.close + 1, text: `{${eol}${inner ? indent + inner + eol : ''}${lines}${own}}` };
  }
  return { start: block.close, end: block.close, text: eol + lines + own };
}

/** The indentation of the block's items: taken from its first item on a line of its own, else one level in. */
function bodyIndent(text: string, block: HclItem): string {
  for (const item of block.items) {
    const prefix = text.slice(item.lineStart, item.start);
    if (prefix.trim() === '' && item.lineStart > block.open) return prefix;
  }
  const own = ownIndent(text, block);
  return own + (own.includes('\t') ? '\t' : '  ');
}

function ownIndent(text: string, item: HclItem): string {
  const prefix = text.slice(item.lineStart, item.start);
  return prefix.trim() === '' ? prefix : '';
}

/** True when nothing but blanks precede the item on its first line and nothing but blanks or a line comment follow it. */
function aloneOnLines(text: string, item: HclItem): boolean {
  return text.slice(item.lineStart, item.start).trim() === '' && /^[ \t]*(?:(?:#|\/\/).*)?\r?\n?$/.test(text.slice(item.end, item.lineEnd));
}

/**
 * The end of a removal of whole lines, taking the blank line after it too when a blank line precedes
 * it, so removing a block from between two blank lines does not leave two.
 */
function withBlankAfter(text: string, start: number, end: number): number {
  if (start === 0 || text[end - 1] !== '\n' || end >= text.length) return end;
  const blank = (from: number) => text.slice(from, lineEndOf(text, from)).trim() === '';
  return blank(lineStartOf(text, start - 1)) && blank(end) ? lineEndOf(text, end) : end;
}

/** Start of the run of `#`/`//` comment lines directly above `item` (no blank line between), inside `block`. */
function commentsAbove(text: string, block: HclItem, item: HclItem): number {
  const index = block.items.indexOf(item);
  const floor = index > 0 ? block.items[index - 1]!.lineEnd : lineEndOf(text, block.open);
  let start = item.lineStart;
  while (start > floor) {
    const previous = lineStartOf(text, start - 1);
    if (previous < floor) break;
    const line = text.slice(previous, start).trim();
    if (!/^(#|\/\/)/.test(line) || line.includes('*/') || line.includes('/*')) break;
    start = previous;
  }
  return start;
}

/** The line break used by the line holding `offset`, or the file's, or `\n`. */
export function eolAt(text: string, offset: number): string {
  const end = lineEndOf(text, offset);
  if (text[end - 1] === '\n') return text[end - 2] === '\r' ? '\r\n' : '\n';
  return text.includes('\r\n') ? '\r\n' : '\n';
}

function applyEdits(text: string, edits: Edit[]): string {
  for (const edit of [...edits].sort((a, b) => b.start - a.start)) {
    text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
  }
  return text;
}
