import type { Severity } from '../compliance/index.js';
import {
  affectedEntries,
  databaseOf,
  distributionUrgency,
  nvdUrl,
  ratingsOf,
  urgencySeverity,
  type AdvisoryDatabase,
  type AffectedFacts,
  type Rating,
  type VulnerabilityFacts,
} from '../vulndb/index.js';
import type { StoredRange } from '../vulndb/index.js';
import { highestVersion } from './packages.js';
import type { StoredAdvisory } from './tables.js';

/**
 * The vulnerabilities of one installed package, one per vulnerability id, as the CVE findings and the
 * SBOMs describe them. A vulnerability is a CVE when one is known (an advisory naming several CVEs,
 * a DSA, counts for each of them), else the advisory's own id (a GHSA without CVE). Distribution
 * advisories name the SOURCE package: `matchName` is the name the package was matched under.
 */

export interface PackageVulnerability {
  id: string;
  cve: string | null;
  advisories: StoredAdvisory[];
  /** The agent reported this CVE for the package (no advisory of the store matched it). */
  reported: boolean;
}

/** The package's vulnerabilities by id: its advisories' CVEs (or their ids), then the CVEs the agent reported. */
export function vulnerabilitiesOf(advisories: readonly StoredAdvisory[], reportedCves: readonly string[]): Map<string, PackageVulnerability> {
  const out = new Map<string, PackageVulnerability>();
  for (const a of advisories) {
    const cves = a.cve_ids.filter((c) => /^CVE-\d{4}-\d+$/i.test(c)).map((c) => c.toUpperCase());
    for (const id of cves.length ? cves : [a.id]) {
      let entry = out.get(id);
      if (!entry) out.set(id, (entry = { id, cve: cves.length ? id : null, advisories: [], reported: false }));
      if (!entry.advisories.some((x) => x.id === a.id)) entry.advisories.push(a);
    }
  }
  for (const cve of reportedCves) {
    const id = cve.toUpperCase();
    if (!out.has(id)) out.set(id, { id, cve: id, advisories: [], reported: true });
  }
  return out;
}

export interface SeverityBasis {
  severity: Severity;
  /** cvss: a CVSS rating (NVD's, else the advisory's); distribution_urgency: the distribution's own rating; default: neither is known. */
  basis: 'cvss' | 'distribution_urgency' | 'default';
  rating: Rating | null;
  urgency: string | null;
}

export interface VulnerabilityView {
  id: string;
  cve: string | null;
  /** The database the vulnerability was matched from, with its page (the distribution's tracker for Debian). */
  source: AdvisoryDatabase;
  /** The same vulnerability elsewhere: the other advisories naming it, and NVD for a CVE. */
  references: Array<{ id: string; source: AdvisoryDatabase }>;
  summary: string | null;
  description: string | null;
  ratings: Rating[];
  severity: SeverityBasis;
  /** The highest fixed version of the package any advisory names; null when none is published. */
  fixed: string | null;
  /** The advisories' affected ranges and listed versions for this package (its ecosystem and name). */
  ranges: StoredRange[];
  affected_versions: string[];
  advisories: Array<{ id: string; source: AdvisoryDatabase; fixed_versions: string[]; summary: string | null }>;
  published: Date | null;
  updated: Date | null;
  cwes: string[];
  reported_by_agent: boolean;
}

const firstSentence = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(flat)?.[1] ?? flat;
  return sentence.length > max ? `${sentence.slice(0, max - 1).trimEnd()}…` : sentence;
};

/** A short line for a title: the advisory's summary, else the first sentence of the description. */
export function shortSummary(view: Pick<VulnerabilityView, 'summary' | 'description'>, max = 120): string | null {
  const text = view.summary ?? view.description;
  return text ? firstSentence(text, max) : null;
}

export function describeVulnerability(
  facts: VulnerabilityFacts,
  vulnerability: PackageVulnerability,
  pkg: { ecosystem: string | null; matchName: string },
  fallback: Severity,
): VulnerabilityView {
  const { id, cve } = vulnerability;
  const nvd = cve ? facts.cves.get(cve) : undefined;
  const osv = vulnerability.advisories.filter((a) => a.source === 'osv');
  const own = osv.find((a) => a.id === id) ?? osv[0];
  // Where this id was matched from, with its page there. A CVE matched through a distribution's
  // advisory (a DSA) has its own page on that distribution's tracker; through a GHSA, the GHSA's.
  const distribution = pkg.ecosystem !== null && /^(debian|ubuntu|alpine)(:|$)/i.test(pkg.ecosystem);
  const primary: AdvisoryDatabase = !own
    ? { name: 'NVD', url: nvdUrl(id) }
    : own.id !== id && cve && distribution
      ? databaseOf(cve, pkg.ecosystem)
      : databaseOf(own.id, pkg.ecosystem);
  const entries: AffectedFacts[] = osv.flatMap((a) => affectedEntries(facts.advisories.get(a.id), pkg.ecosystem, pkg.matchName));
  const records = osv.map((a) => facts.advisories.get(a.id)).filter((a) => a !== undefined);
  const ratings = ratingsOf(
    facts,
    cve,
    osv.map((a) => ({ id: a.id, ecosystem: pkg.ecosystem })),
  );
  const urgency = records.length ? distributionUrgency(records.find((r) => r.id === own?.id) ?? records[0], entries) : null;
  const rated = ratings.find((r) => r.severity && r.severity !== 'NONE' && r.method !== 'CVSSv2') ?? ratings.find((r) => r.severity && r.severity !== 'NONE');
  const fromUrgency = urgencySeverity(urgency);
  const severity: SeverityBasis = rated
    ? { severity: rated.severity as Severity, basis: 'cvss', rating: rated, urgency }
    : fromUrgency
      ? { severity: fromUrgency, basis: 'distribution_urgency', rating: null, urgency }
      : { severity: fallback, basis: 'default', rating: null, urgency };
  const references: VulnerabilityView['references'] = [];
  for (const a of vulnerability.advisories)
    if (a.id !== id) references.push({ id: a.id, source: a.source === 'osv' ? databaseOf(a.id, pkg.ecosystem) : { name: 'NVD', url: nvdUrl(a.id) } });
  if (cve && primary.name !== 'NVD') references.push({ id: cve, source: { name: 'NVD', url: nvdUrl(cve) } });
  // The text of this id first (NVD's, the id's own record); another advisory's only without it: a DSA's
  // summary ("nghttp2 - security update") speaks of the update, not of the CVE.
  const ownRecord = records.find((r) => r.id === id);
  const ownText = nvd?.description ?? ownRecord?.details ?? null;
  const summary = ownRecord?.summary ?? vulnerability.advisories.find((a) => a.id === id)?.summary ?? (ownText ? null : (records.find((r) => r.summary)?.summary ?? null));
  const details = ownText ?? records.find((r) => r.details)?.details ?? null;
  const dates = (pick: (r: { published: Date | null; modified: Date | null }) => Date | null) =>
    [nvd, ...records].map((r) => (r ? pick(r) : null)).find((d): d is Date => d !== null) ?? null;
  return {
    id,
    cve,
    source: primary,
    references,
    summary,
    description: details ?? summary,
    ratings,
    severity,
    fixed: highestVersion(pkg.ecosystem, [...new Set(vulnerability.advisories.flatMap((a) => a.fixed_versions))]),
    ranges: entries.flatMap((e) => e.ranges),
    affected_versions: [...new Set(entries.flatMap((e) => e.versions))],
    advisories: vulnerability.advisories.map((a) => ({
      id: a.id,
      source: a.source === 'osv' ? databaseOf(a.id, pkg.ecosystem) : { name: 'NVD', url: nvdUrl(a.id) },
      fixed_versions: a.fixed_versions,
      summary: a.summary,
    })),
    published: dates((r) => r.published),
    updated: dates((r) => r.modified),
    cwes: nvd?.cwes.filter((c) => /^CWE-\d+$/.test(c)) ?? [],
    reported_by_agent: vulnerability.reported,
  };
}
