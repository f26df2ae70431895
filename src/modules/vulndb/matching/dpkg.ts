/**
 * Debian/Ubuntu version comparison, as `dpkg --compare-versions` does it (Debian Policy 5.6.12):
 * `[epoch:]upstream[-revision]`; epochs compare numerically, then upstream and revision with the
 * same rule: alternately a non-digit run, compared character by character where `~` sorts before
 * everything (even the end of the string), letters before other characters; then a digit run,
 * compared numerically. So `1.0~rc1` < `1.0` < `1.0+b1` < `1.0.1`, and `1:0.9` > `2.0`.
 */
export interface DpkgVersion {
  epoch: number;
  upstream: string;
  revision: string;
}

export function parseDpkgVersion(text: string): DpkgVersion {
  const version = text.trim();
  if (!version) throw new Error('empty version');
  const colon = version.indexOf(':');
  let epoch = 0;
  let rest = version;
  if (colon >= 0) {
    const epochText = version.slice(0, colon);
    if (!/^\d+$/.test(epochText)) throw new Error(`invalid epoch in "${text}"`);
    epoch = Number(epochText);
    rest = version.slice(colon + 1);
  }
  const dash = rest.lastIndexOf('-');
  const upstream = dash >= 0 ? rest.slice(0, dash) : rest;
  const revision = dash >= 0 ? rest.slice(dash + 1) : '';
  if (!upstream) throw new Error(`empty upstream version in "${text}"`);
  return { epoch, upstream, revision };
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** The sort weight of one character of a non-digit run; NaN (past the end) weighs 0. */
function order(c: number): number {
  if (Number.isNaN(c) || isDigit(c)) return 0;
  if (isLetter(c)) return c;
  if (c === 126) return -1; // '~'
  return c + 256;
}

function compareParts(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let firstDiff = 0;
    while ((i < a.length && !isDigit(a.charCodeAt(i))) || (j < b.length && !isDigit(b.charCodeAt(j)))) {
      const ac = order(a.charCodeAt(i));
      const bc = order(b.charCodeAt(j));
      if (ac !== bc) return ac - bc;
      i++;
      j++;
    }
    while (a.charCodeAt(i) === 48) i++;
    while (b.charCodeAt(j) === 48) j++;
    while (i < a.length && j < b.length && isDigit(a.charCodeAt(i)) && isDigit(b.charCodeAt(j))) {
      if (!firstDiff) firstDiff = a.charCodeAt(i) - b.charCodeAt(j);
      i++;
      j++;
    }
    if (i < a.length && isDigit(a.charCodeAt(i))) return 1;
    if (j < b.length && isDigit(b.charCodeAt(j))) return -1;
    if (firstDiff) return firstDiff;
  }
  return 0;
}

export function compareDpkg(a: string, b: string): number {
  const va = parseDpkgVersion(a);
  const vb = parseDpkgVersion(b);
  if (va.epoch !== vb.epoch) return va.epoch < vb.epoch ? -1 : 1;
  const upstream = compareParts(va.upstream, vb.upstream);
  if (upstream) return Math.sign(upstream);
  return Math.sign(compareParts(va.revision, vb.revision));
}
