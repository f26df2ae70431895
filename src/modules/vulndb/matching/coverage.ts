import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { ecosystemInfo } from './ecosystems.js';
import '../tables.js';

/**
 * Whether package matching can find anything. Packages are matched against the affected packages of
 * OSV advisories: with none loaded, every host reads "0 vulnerable packages" although nothing was
 * checked, and with none for a host's ecosystem (Debian:12, Alpine:v3.19, npm, …) the same holds for
 * that host. Callers say so plainly instead of matching nothing silently.
 */
export interface PackageCoverage {
  /** false: no package advisories are loaded at all, package matching is off. */
  enabled: boolean;
  /** Per ecosystem asked about: whether any advisory names a package of it. */
  ecosystems: Array<{ ecosystem: string; advisories_loaded: boolean }>;
  /** What the caller should know, in words; null when every ecosystem asked about has advisories. */
  message: string | null;
}

export const NO_PACKAGE_ADVISORIES =
  'no package advisories are loaded (OSV data), so package matching is off: packages are not checked and none can be reported vulnerable. ' +
  'Import OSV advisories for your ecosystems (POST /api/v1/vulndb/imports, controlgraph vulndb import, or CONTROLGRAPH_VULNDB_SOURCES=osv=…)';

/** Coverage of the store for the given OSV ecosystems (each one indexed look-up). */
export async function packageCoverage(db: Kysely<Database>, ecosystems: readonly string[] = []): Promise<PackageCoverage> {
  const distinct = [...new Set(ecosystems.filter(Boolean))].sort();
  const keys = distinct.map((e) => ecosystemInfo(e).key);
  const row = await sql<{ any_loaded: boolean; loaded: string[] | null }>`
    SELECT EXISTS (SELECT 1 FROM vulndb_osv_affected) AS any_loaded,
      (SELECT array_agg(k) FROM unnest(${keys}::text[]) k
        WHERE EXISTS (SELECT 1 FROM vulndb_osv_affected a WHERE a.ecosystem_key = k)) AS loaded`.execute(db);
  const { any_loaded: enabled, loaded } = row.rows[0]!;
  const have = new Set(loaded ?? []);
  const list = distinct.map((ecosystem, i) => ({ ecosystem, advisories_loaded: have.has(keys[i]!) }));
  const missing = list.filter((e) => !e.advisories_loaded).map((e) => e.ecosystem);
  const message = !enabled
    ? NO_PACKAGE_ADVISORIES
    : missing.length
      ? `no package advisories are loaded for ${missing.join(', ')}: packages of ${missing.length === 1 ? 'that ecosystem' : 'those ecosystems'} are not checked (import the OSV data of ${missing.length === 1 ? 'it' : 'them'})`
      : null;
  return { enabled, ecosystems: list, message };
}
