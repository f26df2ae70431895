import { lookupTable } from '../../../platform/lookup-table.js';
/**
 * Maven version ordering, as `org.apache.maven.artifact.versioning.ComparableVersion` (Maven 3.9)
 * defines it. A version is split at `.` and `-` and at every switch between digits and letters
 * into a tree of items: numbers, qualifiers and sub-lists (a `-` or a digit/letter switch opens a
 * sub-list). Trailing "null" items (0, "", final, ga, release) are dropped from each list.
 * Qualifiers rank alpha < beta < milestone < rc = cr < snapshot < "" = final = ga = release < sp,
 * then any other qualifier (alphabetically); `a1`, `b1`, `m1` mean alpha-1, beta-1, milestone-1.
 * A number beats a qualifier and a list; a list beats a qualifier. So
 * `1-alpha2` < `1-beta1` < `1-rc` < `1-SNAPSHOT` < `1` = `1.0` = `1-ga` < `1-sp` < `1-abc` < `1-1` < `1.1`.
 */
type Item = { kind: 'int'; value: bigint } | { kind: 'string'; value: string } | { kind: 'list'; items: Item[] };

const QUALIFIERS = ['alpha', 'beta', 'milestone', 'rc', 'snapshot', '', 'sp'];
const ALIASES: Record<string, string> = lookupTable({ ga: '', final: '', release: '', cr: 'rc' });
const RELEASE_INDEX = String(QUALIFIERS.indexOf(''));

function qualifierKey(qualifier: string): string {
  const i = QUALIFIERS.indexOf(qualifier);
  return i === -1 ? `${QUALIFIERS.length}-${qualifier}` : String(i);
}

const strCmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function stringItem(value: string, followedByDigit: boolean): Item {
  let v = value;
  if (followedByDigit && v.length === 1) v = ({ a: 'alpha', b: 'beta', m: 'milestone' } as Record<string, string>)[v] ?? v;
  return { kind: 'string', value: ALIASES[v] ?? v };
}

function parseItem(isDigit: boolean, text: string): Item {
  return isDigit ? { kind: 'int', value: BigInt(text) } : stringItem(text, false);
}

function isNull(item: Item): boolean {
  if (item.kind === 'int') return item.value === 0n;
  if (item.kind === 'string') return qualifierKey(item.value) === RELEASE_INDEX;
  return item.items.length === 0;
}

function normalize(list: Item[]): void {
  for (let i = list.length - 1; i >= 0; i--) {
    const last = list[i]!;
    if (isNull(last)) list.splice(i, 1);
    else if (last.kind !== 'list') break;
  }
}

export function parseMaven(version: string): Item {
  const text = version.toLowerCase();
  const root: Item & { kind: 'list' } = { kind: 'list', items: [] };
  let list = root;
  const stack: Array<Item & { kind: 'list' }> = [root];
  const open = () => {
    const next: Item & { kind: 'list' } = { kind: 'list', items: [] };
    list.items.push(next);
    list = next;
    stack.push(next);
  };
  let isDigit = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '.' || c === '-') {
      list.items.push(i === start ? { kind: 'int', value: 0n } : parseItem(isDigit, text.slice(start, i)));
      start = i + 1;
      if (c === '-') open();
    } else if (c >= '0' && c <= '9') {
      if (!isDigit && i > start) {
        // "rc1": the qualifier, then the number in a sub-list of its own.
        if (list.items.length) open();
        list.items.push(stringItem(text.slice(start, i), true));
        start = i;
        open();
      }
      isDigit = true;
    } else {
      if (isDigit && i > start) {
        list.items.push(parseItem(true, text.slice(start, i)));
        start = i;
        open();
      }
      isDigit = false;
    }
  }
  if (text.length > start) {
    // 1.0.0.X1 < 1.0.0-X2: a trailing qualifier after '.' is treated like one after '-'.
    if (!isDigit && list.items.length) open();
    list.items.push(parseItem(isDigit, text.slice(start)));
  }
  while (stack.length) normalize(stack.pop()!.items);
  return root;
}

/** Compares an item with another, or with "nothing" (null) when one list is longer. */
function compareItem(a: Item, b: Item | null): number {
  if (a.kind === 'int') {
    if (b === null) return a.value === 0n ? 0 : 1;
    if (b.kind === 'int') return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
    return 1;
  }
  if (a.kind === 'string') {
    if (b === null) return strCmp(qualifierKey(a.value), RELEASE_INDEX);
    if (b.kind === 'string') return strCmp(qualifierKey(a.value), qualifierKey(b.value));
    return -1;
  }
  if (b === null) {
    for (const item of a.items) {
      const r = compareItem(item, null);
      if (r) return r;
    }
    return 0;
  }
  if (b.kind === 'int') return -1;
  if (b.kind === 'string') return 1;
  const length = Math.max(a.items.length, b.items.length);
  for (let i = 0; i < length; i++) {
    const l = a.items[i] ?? null;
    const r = b.items[i] ?? null;
    const result = l === null ? (r === null ? 0 : -compareItem(r, l)) : compareItem(l, r);
    if (result) return result;
  }
  return 0;
}

export function compareMaven(a: string, b: string): number {
  return Math.sign(compareItem(parseMaven(a.trim()), parseMaven(b.trim())));
}
