/**
 * Renders JSON values, and bodies of attributes and nested blocks, as HCL in the layout `terraform fmt`
 * produces (two-space indent, `=` aligned across adjacent single-line attributes), so generated files
 * and inserted lines need no reformatting.
 */

export type HclValue = string | number | boolean | null | HclValue[] | { [key: string]: HclValue };

export interface HclAttribute {
  attr: string;
  value: HclValue;
}
export interface HclNestedBlock {
  block: string;
  labels?: string[];
  body: HclBodyItem[];
}
export type HclBodyItem = HclAttribute | HclNestedBlock;

const INDENT = '  ';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;
// Bare object keys that HCL would read as keywords rather than as the literal key.
const KEYWORDS = new Set(['true', 'false', 'null', 'for', 'in', 'if']);

/** A quoted HCL string. `${` and `%{` are escaped too: otherwise HCL reads them as template sequences. */
export function hclString(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    const code = c.charCodeAt(0);
    if (c === '"' || c === '\\') out += '\\' + c;
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if ((c === '$' || c === '%') && value[i + 1] === '{') out += c + c;
    else if (code < 0x20 || code === 0x7f) out += '\\u' + code.toString(16).padStart(4, '0');
    else out += c;
  }
  return out + '"';
}

/** An object key: bare when it is a plain identifier, quoted otherwise (`"aws:cloudformation:stack-name"`). */
export function hclKey(key: string): string {
  return IDENTIFIER.test(key) && !KEYWORDS.has(key) ? key : hclString(key);
}

/**
 * A value as an HCL expression. Lists of scalars stay on one line; objects, and lists holding objects
 * or lists, take one element per line, indented from `indent` (the indentation of the line the value
 * starts on).
 */
export function renderValue(value: HclValue, indent = '', eol = '\n'): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return hclString(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`cannot render ${value} as HCL`);
    return String(value);
  }
  const inner = indent + INDENT;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((v) => v === null || typeof v !== 'object')) return `[${value.map((v) => renderValue(v)).join(', ')}]`;
    return `[${eol}${value.map((v) => `${inner}${renderValue(v, inner, eol)},${eol}`).join('')}${indent}]`;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return '{}';
  const lines = entries.map(([k, v]) => ({ key: hclKey(k), value: renderValue(v, inner, eol) }));
  return `{${eol}${aligned(lines, inner, eol)}${indent}}`;
}

/** `name = value`, as one line's text (no indentation, no line break) unless the value spans lines. */
export function renderAttribute(name: string, value: HclValue, indent = '', eol = '\n'): string {
  return `${name} = ${renderValue(value, indent, eol)}`;
}

/** Body lines at `indent`, each ending with `eol`. */
export function renderBody(items: HclBodyItem[], indent: string, eol = '\n'): string {
  let out = '';
  let run: Array<{ key: string; value: string }> = [];
  const flush = () => {
    out += aligned(run, indent, eol);
    run = [];
  };
  for (const item of items) {
    if ('attr' in item) {
      const value = renderValue(item.value, indent, eol);
      run.push({ key: item.attr, value });
      continue;
    }
    flush();
    const labels = (item.labels ?? []).map((l) => ' ' + hclString(l)).join('');
    out +=
      item.body.length === 0 ? `${indent}${item.block}${labels} {}${eol}` : `${indent}${item.block}${labels} {${eol}${renderBody(item.body, indent + INDENT, eol)}${indent}}${eol}`;
  }
  flush();
  return out;
}

/** A whole top-level block: `resource "<type>" "<name>" { … }` followed by a line break. */
export function renderBlock(block: string, labels: string[], body: HclBodyItem[], eol = '\n'): string {
  return renderBody([{ block, labels, body }], '', eol);
}

/**
 * Attribute lines with `=` aligned the way `terraform fmt` aligns them: across runs of adjacent
 * single-line attributes; an attribute whose value spans lines is left unpadded and ends the run.
 */
function aligned(lines: Array<{ key: string; value: string }>, indent: string, eol: string): string {
  let out = '';
  let i = 0;
  while (i < lines.length) {
    if (lines[i]!.value.includes('\n')) {
      out += `${indent}${lines[i]!.key} = ${lines[i]!.value}${eol}`;
      i++;
      continue;
    }
    let j = i;
    while (j < lines.length && !lines[j]!.value.includes('\n')) j++;
    const width = Math.max(...lines.slice(i, j).map((l) => l.key.length));
    for (const l of lines.slice(i, j)) out += `${indent}${l.key.padEnd(width)} = ${l.value}${eol}`;
    i = j;
  }
  return out;
}
