/**
 * The fallback ordering for versions of no known scheme (CPE versions of NVD, ecosystems without a
 * dedicated comparator): split into runs of digits and of letters (other characters separate), compare
 * run by run, numbers numerically and above words; a version that is a prefix of another is older
 * unless the other continues with a word (`1.0` < `1.0.1`, `1.0rc1` < `1.0`).
 */
function tokens(version: string): Array<bigint | string> {
  const out: Array<bigint | string> = [];
  for (const match of version.toLowerCase().matchAll(/(\d+)|([a-z]+)/g)) out.push(match[1] !== undefined ? BigInt(match[1]) : match[2]!);
  return out;
}

export function compareGeneric(a: string, b: string): number {
  const ta = tokens(a);
  const tb = tokens(b);
  const length = Math.max(ta.length, tb.length);
  for (let i = 0; i < length; i++) {
    const x = ta[i];
    const y = tb[i];
    if (x === undefined) return typeof y === 'string' ? 1 : -1;
    if (y === undefined) return typeof x === 'string' ? -1 : 1;
    if (typeof x !== typeof y) return typeof x === 'bigint' ? 1 : -1;
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
}
