import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { PackageURL } from 'packageurl-js';
import type { Database } from '../../platform/db/schema.js';
import { createVulnMatcher, type PackageQuery } from '../vulndb/index.js';
import { ecosystemInfo } from '../vulndb/index.js';
import type { AgentReport, ReportPackage } from './report-schema.js';
import type { StoredAdvisory } from './tables.js';
import { lookupTable } from '../../platform/lookup-table.js';

/** The OS facts package identity depends on (os-release fields). */
export interface OsFacts {
  id: string | null;
  version_id: string | null;
  version: string | null;
  pretty_name: string | null;
}

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

type Family = 'deb' | 'rpm' | 'apk' | 'pypi' | 'npm' | 'gem' | 'cargo' | 'golang' | 'maven' | 'nuget' | 'composer' | 'generic';

const FAMILY: Record<string, Family> = lookupTable({
  dpkg: 'deb',
  apt: 'deb',
  deb: 'deb',
  rpm: 'rpm',
  yum: 'rpm',
  dnf: 'rpm',
  zypper: 'rpm',
  apk: 'apk',
  pip: 'pypi',
  pypi: 'pypi',
  python: 'pypi',
  npm: 'npm',
  yarn: 'npm',
  pnpm: 'npm',
  gem: 'gem',
  rubygems: 'gem',
  cargo: 'cargo',
  'crates.io': 'cargo',
  go: 'golang',
  golang: 'golang',
  maven: 'maven',
  gradle: 'maven',
  nuget: 'nuget',
  composer: 'composer',
});

export function familyOf(manager: string): Family {
  return FAMILY[manager] ?? 'generic';
}

/**
 * The OSV ecosystem of a package on this OS. Distributions need the release (fixed versions differ
 * per release). rpm has none: the store holds no ordering for RPM versions, so rpm packages are
 * inventoried and put in the SBOM but not matched.
 */
export function ecosystemOf(manager: string, os: OsFacts): string | null {
  const family = familyOf(manager);
  const id = os.id?.toLowerCase() ?? null;
  switch (family) {
    case 'deb':
      if (id === 'debian' && os.version_id) return `Debian:${os.version_id.split('.')[0]}`;
      if (id === 'ubuntu' && os.version_id) return `Ubuntu:${os.version_id}${/\bLTS\b/.test(`${os.version ?? ''} ${os.pretty_name ?? ''}`) ? ':LTS' : ''}`;
      return null;
    case 'apk': {
      const release = os.version_id?.match(/^(\d+)\.(\d+)/);
      return id === 'alpine' && release ? `Alpine:v${release[1]}.${release[2]}` : null;
    }
    case 'pypi':
      return 'PyPI';
    case 'npm':
      return 'npm';
    case 'gem':
      return 'RubyGems';
    case 'cargo':
      return 'crates.io';
    case 'golang':
      return 'Go';
    case 'maven':
      return 'Maven';
    case 'nuget':
      return 'NuGet';
    case 'composer':
      return 'Packagist';
    default:
      return null;
  }
}

function splitLast(name: string, separator: string): [string | undefined, string] {
  const at = name.lastIndexOf(separator);
  return at > 0 ? [name.slice(0, at), name.slice(at + 1)] : [undefined, name];
}

/** The package URL (purl-spec) of an installed package. */
export function purlOf(manager: string, name: string, version: string, arch: string, sourceName: string | null, os: OsFacts): string {
  const family = familyOf(manager);
  const distro = (): Record<string, string> => {
    const q: Record<string, string> = {};
    if (arch) q.arch = arch;
    if (os.id && os.version_id) q.distro = `${os.id.toLowerCase()}-${os.version_id}`;
    return q;
  };
  try {
    switch (family) {
      case 'deb': {
        const q = distro();
        if (sourceName && sourceName !== name) q.upstream = sourceName;
        return new PackageURL('deb', os.id?.toLowerCase() === 'ubuntu' ? 'ubuntu' : 'debian', name, version, q, undefined).toString();
      }
      case 'rpm':
        return new PackageURL('rpm', os.id?.toLowerCase() ?? undefined, name, version, distro(), undefined).toString();
      case 'apk':
        return new PackageURL('apk', 'alpine', name.toLowerCase(), version, distro(), undefined).toString();
      case 'pypi':
        return new PackageURL('pypi', undefined, name.toLowerCase().replace(/[-_.]+/g, '-'), version, undefined, undefined).toString();
      case 'npm': {
        const [namespace, base] = name.startsWith('@') ? splitLast(name, '/') : [undefined, name];
        return new PackageURL('npm', namespace, base, version, undefined, undefined).toString();
      }
      case 'golang':
      case 'composer': {
        const [namespace, base] = splitLast(name, '/');
        return new PackageURL(family, namespace, base, version, undefined, undefined).toString();
      }
      case 'maven': {
        const [group, artifact] = splitLast(name, ':');
        return new PackageURL('maven', group, artifact, version, undefined, undefined).toString();
      }
      default:
        return new PackageURL(family, undefined, name, version, undefined, undefined).toString();
    }
  } catch {
    return new PackageURL('generic', undefined, name, version, undefined, undefined).toString();
  }
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
