import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, workspaceIs, type Scope } from '../../platform/db/scope.js';
import './tables.js';

/**
 * The software of hosts, for other modules (service SBOMs and CVE exposure of the applications
 * module): the package inventory of each host node's last processed agent report.
 *
 * ```ts
 * import { hostPackages } from '../agents/host-software.js';
 * const byNode = await hostPackages(db, scope, ['host:local:host.os.instance:1f3c…']);
 * byNode.get(id) // [{name, version, source: 'dpkg', purl, arch, source_name, source_version, installed_at, cves}]
 * ```
 *
 * Nodes without agent data are absent from the map. `source` is the package manager (dpkg, rpm, apk,
 * …); `cves` are the CVEs the vulnerability store matched plus those the agent reported, as of that
 * report (the ingest re-matches when the store changes). The host's OS (for OSV ecosystems) is the
 * node's `properties.os` (`id`, `version_id`, `name`, `version`, `pretty_name`, os-release fields).
 * Rows come in name order; one query whatever the number of nodes.
 */
export interface HostPackageInfo {
  name: string;
  version: string;
  /** The package manager. */
  source: string;
  purl?: string;
  arch?: string | null;
  source_name?: string | null;
  source_version?: string | null;
  installed_at?: string | null;
  cves?: string[];
}

export async function hostPackages(db: Kysely<Database>, scope: Scope, nodeIds: readonly string[]): Promise<Map<string, HostPackageInfo[]>> {
  const out = new Map<string, HostPackageInfo[]>();
  const ids = [...new Set(nodeIds)];
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('agent_host_packages')
    .select(['node_id', 'name', 'version', 'manager', 'purl', 'arch', 'source_name', 'source_version', 'installed_at', 'matched_cves', 'reported_cves'])
    .where(inTenant(scope.tenantId))
    .where(inWorkspace(scope))
    .where('node_id', '=', sql<string>`ANY(${ids}::text[])`)
    .orderBy('node_id')
    .orderBy('name')
    .orderBy('version')
    .orderBy('arch')
    .execute();
  for (const r of rows) {
    let list = out.get(r.node_id);
    if (!list) out.set(r.node_id, (list = []));
    list.push({
      name: r.name,
      version: r.version,
      source: r.manager,
      purl: r.purl,
      arch: r.arch || null,
      source_name: r.source_name,
      source_version: r.source_version,
      installed_at: r.installed_at ? new Date(r.installed_at).toISOString() : null,
      cves: [...new Set([...r.matched_cves, ...r.reported_cves])].sort(),
    });
  }
  return out;
}

/**
 * How many hosts have agent reports, and the first and last time one was scanned, among the host
 * nodes `nodeFilter` accepts (given the SQL column of a host's node id): a report's method section.
 */
export async function hostReportSpan(
  db: Kysely<Database>,
  scope: Scope,
  nodeFilter: (nodeId: RawBuilder<string>) => RawBuilder<boolean>,
): Promise<{ count: number; first: Date | null; last: Date | null }> {
  const { rows } = await sql<{ count: number; first: Date | null; last: Date | null }>`
    SELECT count(*)::int AS count, min(h.last_scanned_at) AS first, max(h.last_scanned_at) AS last FROM agent_hosts h
    WHERE ${workspaceIs(scope, 'h')} AND ${nodeFilter(sql.ref<string>('h.node_id'))}`.execute(db);
  return rows[0]!;
}

/**
 * When each host's package inventory last changed (the host SBOM's `sbom_updated_at`), for SBOMs
 * that name a host's version. Nodes without agent data are absent.
 */
export async function hostInventoryDates(db: Kysely<Database>, scope: Scope, nodeIds: readonly string[]): Promise<Map<string, Date>> {
  const ids = [...new Set(nodeIds)];
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('agent_hosts')
    .select(['node_id', 'sbom_updated_at'])
    .where(inTenant(scope.tenantId))
    .where(inWorkspace(scope))
    .where('node_id', '=', sql<string>`ANY(${ids}::text[])`)
    .execute();
  return new Map(rows.map((r) => [r.node_id, new Date(r.sbom_updated_at)]));
}
