import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Scope } from '../../platform/db/scope.js';
import { ecosystemOf, purlOf, type HostPackageInfo, type OsFacts } from '../agents/index.js';
import { edgesInWorkspace, nodesInScope } from '../graph/index.js';

/**
 * Where the software of a service's hosts comes from.
 *
 * Hosts: the service's member resources of type `host.os.instance` (the agent's host node), the
 * `host.os.instance` nodes joined to a member by a `same_as` or `runs_on` edge in either direction
 * (the agent links its host node to the cloud instance it runs on with `same_as`), and members whose
 * `properties.packages` is an array.
 *
 * Packages of a host, first found wins:
 * 1. a `HostPackageSource`, the signature of the agents module's `hostPackages(db, scope, nodeIds)`
 *    (its inventory tables, issue 9): `Map<nodeId, HostPackageInfo[]>`, the agents module's record
 *    type, used here rather than restated so the two cannot drift apart;
 * 2. the node's `properties.packages`, an array of the same objects (agent data carried on the node
 *    itself, e.g. imported by a discovery plugin).
 * `source` is the package manager (dpkg, apt, rpm, apk, pip, npm, gem, cargo, go, maven, nuget,
 * composer); `source_name`/`source_version` the distribution's source package (dpkg's
 * ${source:Package}); `cves` the CVE ids known for the package. The host's OS is the node's
 * `properties.os` (os-release fields `id`, `version_id`, `name`, `version`): it makes the purl's
 * distro qualifier and the OSV ecosystem of the vulnerability matcher (`Debian:12`, `Alpine:v3.18`).
 */
export type HostPackageSource = (db: Kysely<Database>, scope: Scope, nodeIds: readonly string[]) => Promise<Map<string, HostPackageInfo[]>>;

export const HOST_NODE_TYPE = 'host.os.instance';
export const HOST_LINK_EDGE_TYPES = ['same_as', 'runs_on'] as const;

export interface HostPackage {
  name: string;
  version: string;
  manager: string | null;
  installedAt: string | null;
  cves: string[];
  sourceName: string | null;
  sourceVersion: string | null;
  arch: string | null;
  purl: string;
  /** OSV ecosystem for the vulnerability matcher, or null when the manager has none we match. */
  ecosystem: string | null;
}

export interface HostOs {
  id: string | null;
  versionId: string | null;
  name: string | null;
  version: string | null;
  prettyName: string | null;
}

export interface Host {
  id: string;
  name: string;
  type: string;
  os: HostOs;
  packages: HostPackage[];
  /** The member resources that brought the host in (itself, or the instance it is the same as). */
  members: string[];
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

function osOf(raw: unknown): HostOs {
  const o = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  return {
    id: str(o.id)?.toLowerCase() ?? null,
    versionId: str(o.version_id) ?? str(o.versionId),
    name: str(o.name) ?? str(o.pretty_name),
    version: str(o.version),
    prettyName: str(o.pretty_name),
  };
}

/** The OS facts package identity reads, from a host's stored os-release fields. */
function factsOf(os: HostOs): OsFacts {
  return { id: os.id, version_id: os.versionId, version: os.version, pretty_name: os.prettyName ?? os.name };
}

function packagesOf(raw: unknown, os: HostOs): HostPackage[] {
  if (!Array.isArray(raw)) return [];
  const out: HostPackage[] = [];
  for (const entry of raw) {
    if (!entry || typeof entry !== 'object') continue;
    const p = entry as Record<string, unknown>;
    const name = str(p.name);
    const version = str(p.version);
    if (!name || !version) continue;
    const manager = str(p.source)?.toLowerCase() ?? str(p.manager)?.toLowerCase() ?? null;
    const arch = str(p.arch) ?? str(p.architecture);
    const sourceName = str(p.source_name);
    const given = str(p.purl);
    const purl = given?.startsWith('pkg:') ? given : purlOf(manager ?? '', name, version, arch ?? '', sourceName, factsOf(os));
    out.push({
      name,
      version,
      manager,
      installedAt: str(p.installed_at),
      cves: Array.isArray(p.cves) ? p.cves.filter((c): c is string => typeof c === 'string' && /^CVE-\d{4}-\d{4,}$/i.test(c.trim())).map((c) => c.trim().toUpperCase()) : [],
      sourceName,
      sourceVersion: str(p.source_version),
      arch,
      purl,
      ecosystem: str(p.ecosystem) ?? ecosystemOf(manager ?? '', factsOf(os)),
    });
  }
  return out;
}

/**
 * The hosts with software data among the resources matched by `members` (a predicate over
 * `nodes AS n`), with their packages (see the top of this file). The links of a host are grouped (v)
 * before the join with the nodes: grouping the graph's node relation by id would not carry the
 * other columns (a subquery has no primary key).
 */
export async function hostsOf(db: Kysely<Database>, scope: Scope, members: RawBuilder<boolean>, source?: HostPackageSource): Promise<Host[]> {
  const rows = await sql<{ id: string; name: string; type: string; os: unknown; packages: unknown; via: string[] }>`
    WITH m AS MATERIALIZED (
      SELECT n.id FROM ${nodesInScope(scope)} n WHERE ${members}
    ), h AS (
      SELECT id, id AS via FROM m
      UNION SELECT e.target, e.source FROM ${edgesInWorkspace(scope)} e JOIN m ON e.source = m.id
        WHERE e.type = ANY(${[...HOST_LINK_EDGE_TYPES]}::text[])
      UNION SELECT e.source, e.target FROM ${edgesInWorkspace(scope)} e JOIN m ON e.target = m.id
        WHERE e.type = ANY(${[...HOST_LINK_EDGE_TYPES]}::text[])
    ), v AS (
      SELECT id, array_agg(DISTINCT via ORDER BY via) AS via FROM h GROUP BY id
    )
    SELECT n.id, n.name, n.type, n.properties -> 'os' AS os,
      CASE WHEN jsonb_typeof(n.properties -> 'packages') = 'array' THEN n.properties -> 'packages' END AS packages,
      v.via
    FROM ${nodesInScope(scope)} n JOIN v ON v.id = n.id
    WHERE n.type = ${HOST_NODE_TYPE} OR jsonb_typeof(n.properties -> 'packages') = 'array'
    ORDER BY n.id`.execute(db);
  const external =
    source && rows.rows.length
      ? await source(
          db,
          scope,
          rows.rows.map((r) => r.id),
        )
      : new Map<string, HostPackageInfo[]>();
  const hosts: Host[] = [];
  for (const row of rows.rows) {
    const raw = external.get(row.id) ?? row.packages;
    if (!Array.isArray(raw)) continue;
    const os = osOf(row.os);
    hosts.push({ id: row.id, name: row.name, type: row.type, os, packages: packagesOf(raw, os), members: row.via });
  }
  return hosts;
}
