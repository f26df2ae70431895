import semver from 'semver';
import { compareApk } from './apk.js';
import { compareDpkg } from './dpkg.js';
import { compareGeneric } from './generic.js';
import { compareMaven } from './maven.js';
import { comparePep440 } from './pep440.js';
import { lookupTable } from '../../../platform/lookup-table.js';

/** Orders two versions (negative, zero, positive); throws when a version is not of the scheme. */
export type Comparator = (a: string, b: string) => number;

/**
 * Semantic Versioning 2.0 (npm, Go modules, crates.io): a leading `v` is ignored (Go writes
 * `v1.2.3`), pre-releases sort before their release, build metadata is ignored.
 */
export function compareSemver(a: string, b: string): number {
  const pa = semver.parse(a.trim().replace(/^v/, ''), { loose: true });
  const pb = semver.parse(b.trim().replace(/^v/, ''), { loose: true });
  if (!pa || !pb) throw new Error(`not a semantic version: "${pa ? b : a}"`);
  return pa.compare(pb);
}

const BY_ECOSYSTEM: Record<string, Comparator> = lookupTable({
  debian: compareDpkg,
  ubuntu: compareDpkg,
  alpine: compareApk,
  pypi: comparePep440,
  maven: compareMaven,
  npm: compareSemver,
  go: compareSemver,
  'crates.io': compareSemver,
});

/** Canonical spelling of the ecosystems OSV names, by lower-case name. */
const CANONICAL: Record<string, string> = lookupTable({
  debian: 'Debian',
  ubuntu: 'Ubuntu',
  alpine: 'Alpine',
  npm: 'npm',
  pypi: 'PyPI',
  go: 'Go',
  maven: 'Maven',
  'crates.io': 'crates.io',
  nuget: 'NuGet',
  rubygems: 'RubyGems',
  packagist: 'Packagist',
});

export interface EcosystemInfo {
  /** Lower-case base name: debian, alpine, npm, pypi, ... */
  base: string;
  /** The lookup key stored with each affected package: base plus the release, normalised. */
  key: string;
  comparator: Comparator;
}

/**
 * Splits an OSV ecosystem (`Debian:12`, `Alpine:v3.18`, `Ubuntu:22.04:LTS`, `npm`, `PyPI`) into its
 * base and release. Releases matter: `Debian:12` and `Debian:11` carry different fixed versions, so a
 * package is only compared with advisories of its own release. `Alpine:3.18` is read as `Alpine:v3.18`.
 */
export function ecosystemInfo(ecosystem: string): EcosystemInfo {
  const trimmed = ecosystem.trim();
  const colon = trimmed.indexOf(':');
  const base = (colon >= 0 ? trimmed.slice(0, colon) : trimmed).toLowerCase();
  let release = colon >= 0 ? trimmed.slice(colon + 1).trim() : '';
  if (base === 'alpine' && /^\d/.test(release)) release = `v${release}`;
  if (base === 'ubuntu' || base === 'debian') release = release.toLowerCase();
  return { base, key: release ? `${base}:${release}` : base, comparator: BY_ECOSYSTEM[base] ?? compareGeneric };
}

/** The name key of a package: PyPI names normalised per PEP 503, every name compared case-insensitively. */
export function packageKey(base: string, name: string): string {
  const lower = name.trim().toLowerCase();
  return base === 'pypi' ? lower.replace(/[-_.]+/g, '-') : lower;
}

export function canonicalEcosystem(base: string): string {
  return CANONICAL[base] ?? base;
}

/** The comparator of one OSV range: SEMVER ranges are semver whatever the ecosystem. */
export function rangeComparator(rangeType: string, info: EcosystemInfo): Comparator {
  return rangeType === 'SEMVER' ? compareSemver : info.comparator;
}
