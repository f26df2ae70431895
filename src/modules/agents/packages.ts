import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { createVulnMatcher, type PackageQuery } from '../vulndb/index.js';
import { ecosystemInfo } from '../vulndb/index.js';
import type { AgentReport, ReportPackage } from './report-schema.js';
import type { StoredAdvisory } from './tables.js';
import { ecosystemOf, familyOf, purlOf, type OsFacts } from './package-identity.js';

/** A reported package, normalised: its identity key, purl and matching query. */
export interface HostPackage {
  key: string;
  manager: string;
  name: string;
  arch: string;
  version: string;
  source_name: string | null;
  source_version: string | null;
  installed_at: string | null;
  purl: string;
  reported_cves: string[];
  /** The OSV ecosystem the store is asked in, or null when no advisory source covers the manager. */
  ecosystem: string | null;
}

export interface MatchResult {
  matched_cves: string[];
  advisories: StoredAdvisory[];
}

export const packageKey = (manager: string, name: string, arch: string, version: string) => `${manager}\u0000${name}\u0000${arch}\u0000${version}`;

/** Normalises the reported packages; exact duplicates (same manager, name, arch and version) collapse. */
export function normalisePackages(packages: readonly ReportPackage[], os: OsFacts): HostPackage[] {
  const byKey = new Map<string, HostPackage>();
  for (const p of packages) {
    const manager = p.source;
    const arch = p.arch ?? '';
    const key = packageKey(manager, p.name, arch, p.version);
    const sourceName = p.source_name && p.source_name !== p.name ? p.source_name : (p.source_name ?? null);
    byKey.set(key, {
      key,
      manager,
      name: p.name,
      arch,
      version: p.version,
      source_name: sourceName,
      source_version: p.source_version ?? null,
      installed_at: p.installed_at ? new Date(p.installed_at).toISOString() : null,
      purl: purlOf(manager, p.name, p.version, arch, sourceName, os),
      reported_cves: [...new Set(p.cves.map((c) => c.toUpperCase()))].sort(),
      ecosystem: ecosystemOf(manager, os),
    });
  }
  return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** What identifies a match: the same package facts against the same store give the same answer. */
export function matchKey(p: Pick<HostPackage, 'ecosystem' | 'name' | 'version' | 'source_name' | 'source_version'>): string {
  return `${p.ecosystem}\u0000${p.name}\u0000${p.version}\u0000${p.source_name ?? ''}\u0000${p.source_version ?? ''}`;
}

export function packagesDigest(packages: readonly HostPackage[]): string {
  const hash = createHash('sha256');
  for (const p of packages) hash.update(`${p.key}\u0001${p.source_name ?? ''}\u0001${p.source_version ?? ''}\u0001${p.installed_at ?? ''}\u0001${p.reported_cves.join(',')}\u0002`);
  return hash.digest('hex');
}

/** Matches the packages against the vulnerability store (a few queries for any number of packages). */
export async function matchPackages(db: Kysely<Database>, packages: readonly HostPackage[]): Promise<Map<string, MatchResult>> {
  const results = new Map<string, MatchResult>();
  const queries: PackageQuery[] = [];
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const p of packages) {
    if (!p.ecosystem) continue;
    const key = matchKey(p);
    if (seen.has(key)) continue;
    seen.add(key);
    keys.push(key);
    queries.push({
      ecosystem: p.ecosystem,
      name: p.name,
      version: p.version,
      ...(p.source_name ? { sourceName: p.source_name } : {}),
      ...(p.source_version ? { sourceVersion: p.source_version } : {}),
    });
  }
  if (queries.length === 0) return results;
  const matches = await createVulnMatcher(db).matchPackages(queries);
  matches.forEach((m, i) => {
    results.set(keys[i]!, {
      matched_cves: m.cve_ids,
      advisories: m.matches.map((v) => ({ id: v.id, source: v.source, cve_ids: v.cve_ids, fixed_versions: v.fixed_versions, summary: v.summary })),
    });
  });
  return results;
}

export const NO_MATCH: MatchResult = Object.freeze({ matched_cves: [], advisories: [] }) as MatchResult;

/** The highest of the versions in the ecosystem's own ordering (the first when they cannot be compared). */
export function highestVersion(ecosystem: string | null, versions: string[]): string | null {
  if (versions.length === 0) return null;
  const compare = ecosystem ? ecosystemInfo(ecosystem).comparator : null;
  return versions.reduce((best, v) => {
    if (!compare) return best;
    try {
      return compare(v, best) > 0 ? v : best;
    } catch {
      return best;
    }
  });
}

/** The command that upgrades the given packages of one manager (only those already installed). */
export function upgradeCommand(manager: string, names: readonly string[]): string {
  const list = names.join(' ');
  switch (familyOf(manager)) {
    case 'deb':
      return `sudo apt-get update && sudo apt-get install --only-upgrade ${list}`;
    case 'rpm':
      return `sudo dnf upgrade ${list}`;
    case 'apk':
      return `sudo apk upgrade ${list}`;
    case 'pypi':
      return `pip install --upgrade ${list}`;
    case 'npm':
      return `npm update ${list}`;
    case 'gem':
      return `gem update ${list}`;
    case 'cargo':
      return names.map((n) => `cargo update -p ${n}`).join(' && ');
    default:
      return `upgrade ${list} with ${manager}`;
  }
}

/** The command that removes the given packages (a mitigation when no fix exists and nothing uses them). */
export function removeCommand(manager: string, names: readonly string[]): string {
  const list = names.join(' ');
  switch (familyOf(manager)) {
    case 'deb':
      return `sudo apt-get remove ${list}`;
    case 'rpm':
      return `sudo dnf remove ${list}`;
    case 'apk':
      return `sudo apk del ${list}`;
    case 'pypi':
      return `pip uninstall ${list}`;
    case 'npm':
      return `npm uninstall ${list}`;
    case 'gem':
      return `gem uninstall ${list}`;
    default:
      return `remove ${list} with ${manager}`;
  }
}

/** OS facts of a report. */
export function osFacts(report: Pick<AgentReport, 'os'>): OsFacts {
  return { id: report.os.id, version_id: report.os.version_id, version: report.os.version, pretty_name: report.os.pretty_name };
}
