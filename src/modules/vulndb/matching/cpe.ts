import { compareGeneric } from './generic.js';

/**
 * CPE 2.3 formatted strings (`cpe:2.3:part:vendor:product:version:update:edition:language:sw_edition:
 * target_sw:target_hw:other`), as NVD configurations use them. `*` is ANY, `-` is NA; `\` escapes.
 */
export interface Cpe {
  part: string;
  vendor: string;
  product: string;
  version: string;
  update: string;
  edition: string;
  language: string;
  swEdition: string;
  targetSw: string;
  targetHw: string;
  other: string;
}

const FIELDS = ['part', 'vendor', 'product', 'version', 'update', 'edition', 'language', 'swEdition', 'targetSw', 'targetHw', 'other'] as const;

/** Splits at unescaped colons and removes the escapes; null when the string is not CPE 2.3. */
export function parseCpe(text: string): Cpe | null {
  if (!text.startsWith('cpe:2.3:')) return null;
  const parts: string[] = [];
  let current = '';
  for (let i = 'cpe:2.3:'.length; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      current += text[++i];
    } else if (c === ':') {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  if (parts.length !== FIELDS.length) return null;
  const cpe = {} as Cpe;
  FIELDS.forEach((field, i) => (cpe[field] = parts[i]!.toLowerCase()));
  return cpe;
}

export interface CpeRange {
  version: string;
  cpe_update: string;
  version_start_including: string | null;
  version_start_excluding: string | null;
  version_end_including: string | null;
  version_end_excluding: string | null;
}

/**
 * Whether a concrete version falls in one NVD cpeMatch: an exact version (`*`-free) must be equal
 * (and when an update is given, `beta9`, `h1` or `-` for none, it must match too), `*` or `-` take the
 * versionStart/End bounds (none means every version). Versions compare with the generic ordering
 * (numbers numerically, `2.0rc1` < `2.0`).
 */
export function cpeVersionMatches(match: CpeRange, version: string, update = '*'): boolean {
  const compare = (a: string, b: string) => compareGeneric(a, b);
  if (match.version !== '*' && match.version !== '-') {
    if (compare(version, match.version) !== 0) return false;
    // `-` (NA) means the release without an update: 10.2.9:- does not cover 10.2.9:h1.
    if (match.cpe_update === '*' || update === '*') return true;
    if (match.cpe_update === '-') return update === '-' || update === '';
    return match.cpe_update === update.toLowerCase();
  }
  if (match.version_start_including !== null && compare(version, match.version_start_including) < 0) return false;
  if (match.version_start_excluding !== null && compare(version, match.version_start_excluding) <= 0) return false;
  if (match.version_end_including !== null && compare(version, match.version_end_including) > 0) return false;
  if (match.version_end_excluding !== null && compare(version, match.version_end_excluding) >= 0) return false;
  return true;
}
