import type { StoredRange } from './tables.js';

/**
 * OSV ranges as `vers` version ranges (the package-url project's "vers" specification, which
 * CycloneDX's `affects[].versions[].range` uses): `vers:deb/<2.40-3`, `vers:npm/>=1.0.0|<1.2.5`,
 * `vers:deb/*` for "every version" (no fix published).
 *
 * An OSV ECOSYSTEM or SEMVER range is a list of events; each `introduced` opens an interval that the
 * next `fixed` (exclusive) or `last_affected` (inclusive) closes; `introduced: "0"` is "from the
 * first version"; an interval left open has no fix. `limit` events only bound a git walk and are
 * ignored. The scheme is the package's purl type (deb, apk, rpm, npm, pypi, ...).
 */

/** `|` separates constraints and `%` escapes: the two characters a version must not carry raw. */
const escape = (version: string) => version.replace(/%/g, '%25').replace(/\|/g, '%7C').replace(/\s/g, '%20');

export function versRange(scheme: string, range: StoredRange): string | null {
  const constraints: string[] = [];
  let open: string | null = null;
  for (const event of range.events) {
    if (event.introduced !== undefined) {
      open = event.introduced;
    } else if (open !== null && (event.fixed !== undefined || event.last_affected !== undefined)) {
      if (open !== '0') constraints.push(`>=${escape(open)}`);
      constraints.push(event.fixed !== undefined ? `<${escape(event.fixed)}` : `<=${escape(event.last_affected!)}`);
      open = null;
    }
  }
  if (open !== null) {
    if (open === '0') return `vers:${scheme}/*`;
    constraints.push(`>=${escape(open)}`);
  }
  return constraints.length ? `vers:${scheme}/${constraints.join('|')}` : null;
}

/** The purl type of a purl (`pkg:deb/debian/bash@5.2` → `deb`), the vers scheme of its versions. */
export function purlType(purl: string): string | null {
  return /^pkg:([a-zA-Z][a-zA-Z0-9.+-]*)\//.exec(purl)?.[1]?.toLowerCase() ?? null;
}
