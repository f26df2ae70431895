import { PackageURL } from 'packageurl-js';
import { lookupTable } from '../../platform/lookup-table.js';

/**
 * What identifies an installed package to the advisory store and in an SBOM: its manager's family,
 * its package URL and its OSV ecosystem. One copy for the agents' reports and for the applications'
 * views of host software (whose package lists come from agents, discovery or imports).
 */

/** The OS facts package identity depends on (os-release fields). */
export interface OsFacts {
  id: string | null;
  version_id: string | null;
  version: string | null;
  pretty_name: string | null;
}

export type Family = 'deb' | 'rpm' | 'apk' | 'pypi' | 'npm' | 'gem' | 'cargo' | 'golang' | 'maven' | 'nuget' | 'composer' | 'generic';

const FAMILY: Record<string, Family> = lookupTable({
  dpkg: 'deb',
  apt: 'deb',
  deb: 'deb',
  debian: 'deb',
  rpm: 'rpm',
  yum: 'rpm',
  dnf: 'rpm',
  zypper: 'rpm',
  apk: 'apk',
  alpine: 'apk',
  pip: 'pypi',
  pypi: 'pypi',
  python: 'pypi',
  poetry: 'pypi',
  npm: 'npm',
  yarn: 'npm',
  pnpm: 'npm',
  node: 'npm',
  gem: 'gem',
  rubygems: 'gem',
  bundler: 'gem',
  cargo: 'cargo',
  crates: 'cargo',
  'crates.io': 'cargo',
  go: 'golang',
  golang: 'golang',
  maven: 'maven',
  gradle: 'maven',
  nuget: 'nuget',
  dotnet: 'nuget',
  composer: 'composer',
  packagist: 'composer',
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
