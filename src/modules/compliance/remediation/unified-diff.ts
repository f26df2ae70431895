/**
 * Unified diffs (`--- a/<path>` / `+++ b/<path>`, three lines of context) that `git apply` and
 * `patch -p1` accept. Lines are compared with their line break, so a CRLF line differs from the same
 * line with LF, and a last line without a line break is marked `\ No newline at end of file`.
 * The line diff is Myers' O(ND) algorithm: exact and minimal, and fast for files of a few thousand lines.
 */

const CONTEXT = 3;
// eslint-disable-next-line no-control-regex
const NEEDS_QUOTING = /["\\\x00-\x1f\x7f]/;

type Op = { kind: ' ' | '-' | '+'; line: string; oldIndex: number; newIndex: number };

/** The text cut into lines, each keeping its `\n` (or `\r\n`); only the last may lack one. */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
    lines.push(text.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/**
 * The unified diff turning `before` into `after`, both at `path` (relative, `/`-separated).
 * Empty when the texts are equal.
 */
export function unifiedDiff(path: string, before: string, after: string): string {
  if (before === after) return '';
  const ops = diffLines(splitLines(before), splitLines(after));
  let out = `--- ${headerPath('a/', path)}\n+++ ${headerPath('b/', path)}\n`;
  for (const [from, to] of hunkRanges(ops)) out += hunk(ops.slice(from, to));
  return out;
}

/** The edit script, equal lines included, in order. */
export function diffLines(a: string[], b: string[]): Op[] {
  // Common prefix and suffix are cheap to peel off and are the bulk of a small fix.
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const ops: Op[] = [];
  for (let i = 0; i < pre; i++) ops.push({ kind: ' ', line: a[i]!, oldIndex: i, newIndex: i });
  for (const op of myers(a.slice(pre, a.length - suf), b.slice(pre, b.length - suf))) {
    ops.push({ ...op, oldIndex: op.oldIndex + pre, newIndex: op.newIndex + pre });
  }
  for (let k = suf; k > 0; k--) {
    ops.push({ kind: ' ', line: a[a.length - k]!, oldIndex: a.length - k, newIndex: b.length - k });
  }
  return ops;
}

function myers(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let done = false;
  for (let d = 0; d <= max && !done; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        done = true;
        break;
      }
    }
  }
  // Walk the recorded frontiers back from (n, m) to (0, 0).
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && vd[offset + k - 1]! < vd[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : vd[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      ops.push({ kind: ' ', line: a[x]!, oldIndex: x, newIndex: y });
    }
    if (d === 0) break;
    if (x === prevX) ops.push({ kind: '+', line: b[--y]!, oldIndex: x, newIndex: y });
    else ops.push({ kind: '-', line: a[--x]!, oldIndex: x, newIndex: y });
  }
  return ops.reverse();
}

/** [from, to) ranges of `ops` forming hunks: changes with up to 3 equal lines either side, merged when contexts touch. */
function hunkRanges(ops: Op[]): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i < ops.length; i++) {
    if (ops[i]!.kind === ' ') continue;
    let j = i;
    while (j < ops.length && ops[j]!.kind !== ' ') j++;
    const from = Math.max(0, i - CONTEXT);
    const to = Math.min(ops.length, j + CONTEXT);
    const last = ranges[ranges.length - 1];
    if (last && from <= last[1]) last[1] = to;
    else ranges.push([from, to]);
    i = j - 1;
  }
  return ranges;
}

function hunk(ops: Op[]): string {
  const first = ops[0]!;
  const oldCount = ops.filter((o) => o.kind !== '+').length;
  const newCount = ops.filter((o) => o.kind !== '-').length;
  // An empty side is numbered by the line before it (0 at the top of the file), as diff(1) does.
  const oldStart = oldCount === 0 ? first.oldIndex : first.oldIndex + 1;
  const newStart = newCount === 0 ? first.newIndex : first.newIndex + 1;
  let out = `@@ -${oldStart},${oldCount} +${newStart},${newCount} @@\n`;
  for (const op of ops) {
    out += op.kind + op.line;
    if (!op.line.endsWith('\n')) out += '\n\\ No newline at end of file\n';
  }
  return out;
}

/** `a/<path>`, C-quoted the way git writes names that hold quotes, backslashes or control characters. */
function headerPath(prefix: string, path: string): string {
  const name = prefix + path;
  if (!NEEDS_QUOTING.test(name)) return name;
  const escaped = name.replace(new RegExp(NEEDS_QUOTING.source, 'g'), (c) => {
    const named: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\t': '\\t', '\r': '\\r' };
    return named[c] ?? '\\' + c.charCodeAt(0).toString(8).padStart(3, '0');
  });
  return `"${escaped}"`;
}
