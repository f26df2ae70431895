import type { StoredRange } from '../tables.js';
import type { Comparator } from './ecosystems.js';

export interface AffectedEntry {
  ranges: StoredRange[];
  versions: string[];
}

export interface RangeVerdict {
  affected: boolean;
  /** The fixed versions above the version (the upgrade targets), when affected. */
  fixed: string[];
}

/** Compares, treating the OSV "0" (before every version) as the minimum. */
function orderedCompare(compare: Comparator, a: string, b: string): number {
  if (a === b) return 0;
  if (a === '0') return -1;
  if (b === '0') return 1;
  return compare(a, b);
}

function eventVersion(e: StoredRange['events'][number]): string {
  return (e.introduced ?? e.fixed ?? e.last_affected ?? e.limit)!;
}

/**
 * Evaluates one OSV range for a version, as the OSV schema defines it: events sorted by version; an
 * `introduced` at or below the version opens the range, a `fixed` at or below it (or a
 * `last_affected` below it) closes it; a `limit` at or below the version excludes it. Throws when a
 * version is not of the range's scheme.
 */
export function inRange(version: string, range: StoredRange, compare: Comparator): boolean {
  const events = [...range.events].sort((a, b) => orderedCompare(compare, eventVersion(a), eventVersion(b)));
  let affected = false;
  for (const event of events) {
    if (event.introduced !== undefined) {
      if (event.introduced === '0' || compare(version, event.introduced) >= 0) affected = true;
    } else if (event.fixed !== undefined) {
      if (compare(version, event.fixed) >= 0) affected = false;
    } else if (event.last_affected !== undefined) {
      if (compare(version, event.last_affected) > 0) affected = false;
    } else if (event.limit !== undefined) {
      if (event.limit !== '*' && compare(version, event.limit) >= 0) return false;
    }
  }
  return affected;
}

/**
 * Whether a version is affected by an OSV `affected[]` entry: listed in `versions`, or inside one of
 * its ECOSYSTEM/SEMVER ranges. A range whose versions cannot be compared (a version of another scheme)
 * does not match; the explicit list still does.
 */
export function evaluateAffected(version: string, entry: AffectedEntry, comparatorFor: (rangeType: string) => Comparator): RangeVerdict {
  let affected = entry.versions.includes(version);
  const fixed: string[] = [];
  for (const range of entry.ranges) {
    const compare = comparatorFor(range.type);
    let hit = false;
    try {
      hit = inRange(version, range, compare);
    } catch {
      hit = false;
    }
    if (!hit) continue;
    affected = true;
    for (const event of range.events) {
      if (event.fixed === undefined) continue;
      try {
        if (compare(event.fixed, version) > 0) fixed.push(event.fixed);
      } catch {
        // a fixed version of another scheme is not an upgrade target
      }
    }
  }
  return { affected, fixed: affected ? [...new Set(fixed)] : [] };
}
