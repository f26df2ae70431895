/**
 * PyPI version comparison per PEP 440 (the ordering of `packaging.version.Version`):
 * `[N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local]`, case-insensitive, with the spec's alternative
 * spellings (alpha, beta, c, pre, preview, rev, r, `-N` post releases, `v` prefix, `-`/`_`/`.`
 * separators). Order: epoch; release (trailing zeros ignored); then a dev release of a final
 * version sorts before its pre-releases, pre-releases before the final release, post releases after
 * it, dev releases before what they develop; a local label sorts after the same public version.
 */
const PATTERN = new RegExp(
  '^v?' +
    '(?:(?<epoch>[0-9]+)!)?' +
    '(?<release>[0-9]+(?:\\.[0-9]+)*)' +
    '(?<pre>[-_.]?(?<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?<pre_n>[0-9]+)?)?' +
    '(?<post>(?:-(?<post_n1>[0-9]+))|(?:[-_.]?(?<post_l>post|rev|r)[-_.]?(?<post_n2>[0-9]+)?))?' +
    '(?<dev>[-_.]?(?<dev_l>dev)[-_.]?(?<dev_n>[0-9]+)?)?' +
    '(?:\\+(?<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?$',
  'i',
);

export interface Pep440Version {
  epoch: bigint;
  release: bigint[];
  pre: [string, bigint] | null;
  post: bigint | null;
  dev: bigint | null;
  local: Array<bigint | string> | null;
}

export function parsePep440(text: string): Pep440Version | null {
  const m = PATTERN.exec(text.trim());
  if (!m?.groups) return null;
  const g = m.groups;
  const preLabel = g.pre_l?.toLowerCase();
  const normalizedPre = preLabel === undefined ? null : preLabel === 'alpha' ? 'a' : preLabel === 'beta' ? 'b' : ['c', 'pre', 'preview'].includes(preLabel) ? 'rc' : preLabel;
  const num = (s: string | undefined) => BigInt(s ?? '0');
  return {
    epoch: num(g.epoch),
    release: g.release!.split('.').map((p) => BigInt(p)),
    pre: normalizedPre ? [normalizedPre, num(g.pre_n)] : null,
    post: g.post === undefined ? null : num(g.post_n1 ?? g.post_n2),
    dev: g.dev === undefined ? null : num(g.dev_n),
    local:
      g.local === undefined
        ? null
        : g.local
            .toLowerCase()
            .split(/[-_.]/)
            .map((p) => (/^\d+$/.test(p) ? BigInt(p) : p)),
  };
}

const cmp = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

function compareRelease(a: bigint[], b: bigint[]): number {
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const r = cmp(a[i] ?? 0n, b[i] ?? 0n);
    if (r) return r;
  }
  return 0;
}

/** -1 / +1 stand for the spec's negative and positive infinity in the sort key. */
function preKey(v: Pep440Version): [number, string, bigint] {
  if (v.pre === null && v.post === null && v.dev !== null) return [-1, '', 0n];
  if (v.pre === null) return [1, '', 0n];
  return [0, v.pre[0], v.pre[1]];
}

function compareLocal(a: Pep440Version['local'], b: Pep440Version['local']): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    // Numeric segments sort after alphanumeric ones.
    if (typeof x !== typeof y) return typeof x === 'bigint' ? 1 : -1;
    const r = typeof x === 'bigint' ? cmp(x, y as bigint) : x < (y as string) ? -1 : x > (y as string) ? 1 : 0;
    if (r) return r;
  }
  return 0;
}

export function comparePep440Parsed(a: Pep440Version, b: Pep440Version): number {
  let r = cmp(a.epoch, b.epoch) || compareRelease(a.release, b.release);
  if (r) return r;
  const [ap, al, an] = preKey(a);
  const [bp, bl, bn] = preKey(b);
  r = Math.sign(ap - bp) || (al < bl ? -1 : al > bl ? 1 : 0) || cmp(an, bn);
  if (r) return r;
  // No post release sorts first; no dev release sorts last.
  if (a.post !== b.post) {
    if (a.post === null) return -1;
    if (b.post === null) return 1;
    r = cmp(a.post, b.post);
    if (r) return r;
  }
  if (a.dev !== b.dev) {
    if (a.dev === null) return 1;
    if (b.dev === null) return -1;
    r = cmp(a.dev, b.dev);
    if (r) return r;
  }
  return compareLocal(a.local, b.local);
}

export function comparePep440(a: string, b: string): number {
  const pa = parsePep440(a);
  const pb = parsePep440(b);
  if (!pa || !pb) throw new Error(`not a PEP 440 version: "${pa ? b : a}"`);
  return comparePep440Parsed(pa, pb);
}
