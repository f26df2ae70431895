/**
 * Package → vulnerability matching, for the host agent (issue 9), SBOM checks and the API.
 *
 * ```ts
 * import { createVulnMatcher } from '../vulndb/index.js';
 * const matcher = createVulnMatcher(deps.database.db);
 * const one = await matcher.matchPackage({ ecosystem: 'npm', name: 'lodash', version: '4.17.15' });
 * const many = await matcher.matchPackages(inventory);            // same order as the input, 2 queries
 * const cves = await matcher.matchCpe('cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*');
 * ```
 *
 * - `PackageQuery.ecosystem` is an OSV ecosystem: `Debian:12`, `Ubuntu:22.04:LTS`, `Alpine:v3.18`, `npm`,
 *   `PyPI`, `Go`, `Maven` (name `group:artifact`), `crates.io`, ... The release matters for
 *   distributions (each release has its own fixed versions); names compare case-insensitively, PyPI
 *   names after PEP 503 normalisation.
 * - Debian, Ubuntu and Alpine advisories name SOURCE packages: pass `sourceName` / `sourceVersion`
 *   (dpkg's `${source:Package}` / `${source:Version}`, apk's origin) when they differ from the binary.
 * - OSV ranges are evaluated with the ecosystem's own ordering (dpkg, apk, PEP 440, Maven, semver; see
 *   ecosystems.ts); a version listed in an advisory's `versions` matches too; withdrawn advisories never.
 * - `cpe: {vendor?, product}` additionally checks NVD CPE configurations (vulnerable cpeMatch entries,
 *   version bounds included/excluded). Platform conditions of AND configurations (e.g. "running on
 *   Windows") are not evaluated: a CPE match means "potentially affected".
 * - Batches cost one query per 1,000 distinct packages plus one for CPE products, not one per package.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { StoredRange } from '../tables.js';
import '../tables.js';
import { cpeVersionMatches, parseCpe } from './cpe.js';
import { ecosystemInfo, packageKey, rangeComparator } from './ecosystems.js';
import { evaluateAffected } from './osv-range.js';

export interface PackageQuery {
  ecosystem: string;
  name: string;
  version: string;
  /** Distribution advisories name source packages: the binary package's source name and version. */
  sourceName?: string;
  sourceVersion?: string;
  /** Also match NVD CPE configurations of this product (and vendor, when given). */
  cpe?: { vendor?: string; product: string };
}

export interface VulnerabilityMatch {
  /** osv: an OSV advisory (GHSA-…, DSA-…, CVE-…); nvd: a CVE through its CPE configuration. */
  source: 'osv' | 'nvd';
  id: string;
  cve_ids: string[];
  aliases: string[];
  summary: string | null;
  /** The advisory's package (OSV) or the cpeMatch criteria (NVD) that matched. */
  ecosystem: string;
  package: string;
  version: string;
  /** Versions that fix it, above the matched version (empty when no fix is known). */
  fixed_versions: string[];
}

export interface PackageMatches {
  package: PackageQuery;
  matches: VulnerabilityMatch[];
  /** Every CVE of the matches, sorted. */
  cve_ids: string[];
}

export interface VulnMatcher {
  matchPackage(query: PackageQuery): Promise<PackageMatches>;
  /** Matches many packages with a handful of queries; the result has the input's order. */
  matchPackages(queries: readonly PackageQuery[]): Promise<PackageMatches[]>;
  /** CVEs whose NVD configurations include this CPE 2.3 name (its version, and update when given). */
  matchCpe(cpe: string): Promise<VulnerabilityMatch[]>;
}

interface AffectedRecord {
  advisory_id: string;
  ecosystem: string;
  ecosystem_key: string;
  name: string;
  name_key: string;
  ranges: StoredRange[];
  versions: string[];
  cve_ids: string[];
  aliases: string[];
  summary: string | null;
}

interface CpeRecord {
  cve_id: string;
  criteria: string;
  vendor: string;
  product: string;
  version: string;
  cpe_update: string;
  version_start_including: string | null;
  version_start_excluding: string | null;
  version_end_including: string | null;
  version_end_excluding: string | null;
  description: string | null;
}

const CHUNK = 1_000;

interface Prepared {
  query: PackageQuery;
  ecosystemKey: string;
  nameKey: string;
  version: string;
  base: string;
}

function prepare(query: PackageQuery): Prepared {
  const info = ecosystemInfo(query.ecosystem);
  const name = query.sourceName?.trim() || query.name;
  return { query, ecosystemKey: info.key, nameKey: packageKey(info.base, name), version: (query.sourceVersion?.trim() || query.version).trim(), base: info.base };
}

export function createVulnMatcher(db: Kysely<Database>): VulnMatcher {
  async function loadAffected(pairs: Array<[string, string]>): Promise<Map<string, AffectedRecord[]>> {
    const byKey = new Map<string, AffectedRecord[]>();
    for (let i = 0; i < pairs.length; i += CHUNK) {
      const chunk = pairs.slice(i, i + CHUNK);
      const rows = await sql<AffectedRecord>`
        SELECT a.advisory_id, a.ecosystem, a.ecosystem_key, a.name, a.name_key, a.ranges, a.versions, v.cve_ids, v.aliases, v.summary
        FROM vulndb_osv_affected a
        JOIN vulndb_osv_advisories v ON v.id = a.advisory_id
        WHERE v.withdrawn IS NULL
          AND (a.ecosystem_key, a.name_key) IN (SELECT * FROM unnest(${chunk.map((p) => p[0])}::text[], ${chunk.map((p) => p[1])}::text[]))
        ORDER BY a.advisory_id, a.idx`.execute(db);
      for (const row of rows.rows) {
        const key = `${row.ecosystem_key}\u0000${row.name_key}`;
        let list = byKey.get(key);
        if (!list) byKey.set(key, (list = []));
        list.push(row);
      }
    }
    return byKey;
  }

  async function loadCpe(products: string[]): Promise<Map<string, CpeRecord[]>> {
    const byProduct = new Map<string, CpeRecord[]>();
    if (products.length === 0) return byProduct;
    const rows = await sql<CpeRecord>`
      SELECT m.cve_id, m.criteria, m.vendor, m.product, m.version, m.cpe_update, m.version_start_including, m.version_start_excluding,
        m.version_end_including, m.version_end_excluding, c.description
      FROM vulndb_cpe_matches m JOIN vulndb_cves c ON c.cve_id = m.cve_id
      WHERE m.vulnerable AND NOT m.negate AND m.product = ANY(${products}::text[])
      ORDER BY m.cve_id, m.config_index, m.node_index, m.match_index`.execute(db);
    for (const row of rows.rows) {
      let list = byProduct.get(row.product);
      if (!list) byProduct.set(row.product, (list = []));
      list.push(row);
    }
    return byProduct;
  }

  function osvMatches(prepared: Prepared, records: AffectedRecord[]): VulnerabilityMatch[] {
    const byAdvisory = new Map<string, VulnerabilityMatch>();
    const info = ecosystemInfo(prepared.query.ecosystem);
    for (const record of records) {
      const verdict = evaluateAffected(prepared.version, record, (type) => rangeComparator(type, info));
      if (!verdict.affected) continue;
      const existing = byAdvisory.get(record.advisory_id);
      if (existing) {
        existing.fixed_versions = [...new Set([...existing.fixed_versions, ...verdict.fixed])];
        continue;
      }
      byAdvisory.set(record.advisory_id, {
        source: 'osv',
        id: record.advisory_id,
        cve_ids: record.cve_ids,
        aliases: record.aliases,
        summary: record.summary,
        ecosystem: record.ecosystem,
        package: record.name,
        version: prepared.version,
        fixed_versions: verdict.fixed,
      });
    }
    return [...byAdvisory.values()];
  }

  function cpeMatches(records: CpeRecord[], vendor: string | undefined, version: string, update?: string): VulnerabilityMatch[] {
    const byCve = new Map<string, VulnerabilityMatch>();
    for (const record of records) {
      if (vendor && record.vendor !== vendor) continue;
      if (byCve.has(record.cve_id) || !cpeVersionMatches(record, version, update)) continue;
      byCve.set(record.cve_id, {
        source: 'nvd',
        id: record.cve_id,
        cve_ids: [record.cve_id],
        aliases: [],
        summary: record.description,
        ecosystem: 'cpe',
        package: record.criteria,
        version,
        fixed_versions: record.version_end_excluding ? [record.version_end_excluding] : [],
      });
    }
    return [...byCve.values()];
  }

  function finish(query: PackageQuery, matches: VulnerabilityMatch[]): PackageMatches {
    return { package: query, matches, cve_ids: [...new Set(matches.flatMap((m) => m.cve_ids))].sort() };
  }

  async function matchPackages(queries: readonly PackageQuery[]): Promise<PackageMatches[]> {
    const prepared = queries.map(prepare);
    const pairs = new Map<string, [string, string]>();
    for (const p of prepared) pairs.set(`${p.ecosystemKey}\u0000${p.nameKey}`, [p.ecosystemKey, p.nameKey]);
    const products = [...new Set(prepared.filter((p) => p.query.cpe?.product).map((p) => p.query.cpe!.product.toLowerCase()))];
    const [affected, cpes] = await Promise.all([loadAffected([...pairs.values()]), loadCpe(products)]);
    return prepared.map((p) => {
      const matches = osvMatches(p, affected.get(`${p.ecosystemKey}\u0000${p.nameKey}`) ?? []);
      const cpe = p.query.cpe;
      if (cpe?.product) matches.push(...cpeMatches(cpes.get(cpe.product.toLowerCase()) ?? [], cpe.vendor?.toLowerCase(), p.query.version));
      return finish(p.query, matches);
    });
  }

  return {
    matchPackages,
    async matchPackage(query) {
      return (await matchPackages([query]))[0]!;
    },
    async matchCpe(text) {
      const cpe = parseCpe(text);
      if (!cpe) throw new Error(`not a CPE 2.3 name: "${text}"`);
      if (cpe.version === '*' || cpe.version === '-') throw new Error('the CPE name needs a concrete version');
      const records = (await loadCpe([cpe.product])).get(cpe.product) ?? [];
      return cpeMatches(records, cpe.vendor === '*' ? undefined : cpe.vendor, cpe.version, cpe.update);
    },
  };
}
