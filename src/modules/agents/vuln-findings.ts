import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Severity } from '../compliance/index.js';
import { createKevLookup } from '../vulndb/index.js';
import { vulnerabilityFacts } from '../vulndb/index.js';
import type { DesiredFinding } from '../compliance/index.js';
import { fillTemplate, type TemplateRule } from './host-rules.js';
import type { PackageWithMatch } from './inventory-repo.js';
import { describeVulnerability, shortSummary, vulnerabilitiesOf, type PackageVulnerability, type VulnerabilityView } from './package-vulnerabilities.js';
import { removeCommand, upgradeCommand } from './packages.js';

/**
 * CVE findings: one per (host, source package, vulnerability). Distributions publish advisories for
 * SOURCE packages, so the binary packages built from one source (binutils, binutils-common,
 * libbinutils, …) share one finding that lists them; a language package is its own source. The
 * vulnerability is a CVE when one is known, else the advisory's id.
 *
 * Severity: the CVSS severity when a score is known (NVD's, else the advisory's own vector), else the
 * distribution's urgency (Debian's "low", "unimportant", …), else the rule's (MEDIUM); CRITICAL when
 * the CVE is in the KEV catalog (the base severity stays, so it comes back when the CVE leaves it).
 * When a fixed version is published the remediation is the upgrade; when none is, it says so and
 * gives the mitigations instead (remove the packages if unused, restrict exposure, watch the advisory).
 *
 * Findings of the earlier shape (one per binary package, `host-vuln-<manager>-<name>`) share the rule
 * prefix: the first report processed with this code resolves them and opens the grouped ones.
 */

const RULE_NAME = /^[a-z0-9][a-z0-9.+-]*$/;
const MAX_RULE_ID = 100;
const MAX_DESCRIPTION = 1_500;
const MAX_LISTED = 20;
/** Finding titles are one line of at most 200 characters (the compliance module's limit): the summary gives way. */
const MAX_TITLE = 200;

/** Rule id `<prefix>-<manager>-<name>` (name: `<source package>-<vulnerability id>`), colon-free, at most 100 characters. */
export function vulnRuleId(prefix: string, manager: string, name: string): string {
  const plain = `${prefix}-${manager}-${name}`;
  if (RULE_NAME.test(name) && plain.length <= MAX_RULE_ID) return plain;
  const hash = createHash('sha256').update(`${manager}\u0000${name}`).digest('hex').slice(0, 8);
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9.+-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${prefix}-${manager}-${slug}`.slice(0, MAX_RULE_ID - 9).replace(/-+$/, '') + `-${hash}`;
}

interface Group {
  manager: string;
  source: string;
  vulnerability: PackageVulnerability;
  instances: PackageWithMatch[];
}

const list = (items: readonly string[]) => (items.length > MAX_LISTED ? `${items.slice(0, MAX_LISTED).join(', ')}, … (${items.length - MAX_LISTED} more)` : items.join(', '));
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text);

function severityText(view: VulnerabilityView, kev: boolean): string {
  const { basis, rating, urgency, severity } = view.severity;
  const base =
    basis === 'cvss' && rating
      ? `Severity ${severity} from the ${rating.source.name} CVSS ${rating.method.replace('CVSSv31', 'v3.1').replace('CVSSv3', 'v3.0').replace('CVSSv4', 'v4.0').replace('CVSSv2', 'v2')} rating${rating.score !== null ? ` ${rating.score}` : ''}${rating.vector ? ` (${rating.vector})` : ''}.`
      : basis === 'distribution_urgency'
        ? `Severity ${severity} from the distribution's urgency "${urgency}" (no CVSS score is known).`
        : `Severity ${severity} by default: neither a CVSS score nor a distribution rating is known${urgency ? ` (urgency "${urgency}")` : ''}.`;
  return kev ? `${base} Raised to CRITICAL: ${view.cve} is in CISA's Known Exploited Vulnerabilities catalog.` : base;
}

export interface VulnerabilityFindings {
  findings: DesiredFinding[];
  /** Installed packages (by manager and name) with at least one vulnerability. */
  vulnerablePackages: number;
}

export async function vulnerabilityFindings(
  db: Kysely<Database>,
  rule: TemplateRule,
  packages: readonly PackageWithMatch[],
  host: { name: string },
): Promise<VulnerabilityFindings> {
  const groups = new Map<string, Group>();
  const vulnerable = new Set<string>();
  for (const p of packages) {
    if (p.match.advisories.length === 0 && p.reported_cves.length === 0) continue;
    vulnerable.add(`${p.manager}\u0000${p.name}`);
    const source = p.source_name ?? p.name;
    for (const v of vulnerabilitiesOf(p.match.advisories, p.reported_cves).values()) {
      const key = `${p.manager}\u0000${source}\u0000${v.id}`;
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { manager: p.manager, source, vulnerability: { ...v, advisories: [...v.advisories] }, instances: [] }));
      for (const a of v.advisories) {
        const known = group.vulnerability.advisories.find((x) => x.id === a.id);
        if (!known) group.vulnerability.advisories.push(a);
        else known.fixed_versions = [...new Set([...known.fixed_versions, ...a.fixed_versions])];
      }
      group.instances.push(p);
    }
  }
  if (groups.size === 0) return { findings: [], vulnerablePackages: 0 };
  const all = [...groups.values()];
  const cves = [...new Set(all.flatMap((g) => (g.vulnerability.cve ? [g.vulnerability.cve] : [])))];
  const [facts, kev] = await Promise.all([
    vulnerabilityFacts(db, { advisoryIds: all.flatMap((g) => g.vulnerability.advisories.filter((a) => a.source === 'osv').map((a) => a.id)), cveIds: cves }),
    createKevLookup(db).isKnownExploited(cves),
  ]);

  const out: DesiredFinding[] = [];
  for (const g of all) {
    const first = g.instances[0]!;
    const ecosystem = first.ecosystem;
    const view = describeVulnerability(facts, g.vulnerability, { ecosystem, matchName: g.source }, rule.severity);
    const known = view.cve && kev.has(view.cve) ? [view.cve] : [];
    const severity: Severity = known.length ? 'CRITICAL' : view.severity.severity;
    // One entry per installed binary package: a multiarch host has libstdc++6 for amd64 and for arm64,
    // two installations of the same vulnerable code.
    const binaries = [...new Map(g.instances.map((p) => [`${p.name}\u0000${p.arch ?? ''}\u0000${p.version}`, p])).values()].sort(
      (a, b) => a.name.localeCompare(b.name) || (a.arch ?? '').localeCompare(b.arch ?? '') || a.version.localeCompare(b.version),
    );
    const names = [...new Set(binaries.map((p) => p.name))];
    const sourceVersions = [...new Set(g.instances.map((p) => p.source_version ?? p.version))];
    const where = ecosystem ?? g.manager;
    const upgrade = view.fixed ? upgradeCommand(g.manager, names) : null;
    const mitigation = view.fixed
      ? null
      : `No fixed version of ${g.source} is published for ${where} yet, so there is nothing to upgrade to. ` +
        `Until one is: remove ${list(names)} if nothing on ${host.name} needs ${names.length > 1 ? 'them' : 'it'} (${removeCommand(g.manager, names)}); ` +
        `otherwise restrict who can reach and run ${names.length > 1 ? 'them' : 'it'} (network exposure, local users), ` +
        `and watch ${view.source.url} for a fix. The finding resolves when a fixed version is installed or the packages are removed.`;
    const urgencyNote = view.severity.urgency && view.severity.urgency !== 'not yet assigned' ? ` The distribution rates it "${view.severity.urgency}".` : '';
    const values = {
      host: host.name,
      vulnerability: view.id,
      package: g.source,
      version: sourceVersions.join(', '),
      ecosystem: where,
      manager: g.manager,
      binaries: list(binaries.map((p) => `${p.name} ${p.version}${p.arch ? ` (${p.arch})` : ''}`)),
      summary: '',
      details: view.description ? clip(view.description.replace(/\s+/g, ' ').trim(), MAX_DESCRIPTION) : 'No description is published yet.',
      advisories: view.advisories.length ? list(view.advisories.map((a) => `${a.id} (${a.source.name})`)) : 'reported by the agent',
      fix_status: view.fixed ? `Fixed in ${g.source} ${view.fixed}.` : `No fixed version is published for ${where} yet.${urgencyNote}`,
      severity_basis: severityText(view, known.length > 0),
      fixed: view.fixed ?? 'none published',
      remediation: view.fixed ? `Upgrade ${list(names)} (source package ${g.source}) to ${view.fixed} or later: ${upgrade}.` : mitigation!,
      upgrade_command: upgrade ?? 'none: no fixed version is published',
    };
    const room = MAX_TITLE - fillTemplate(rule.finding_title, values).length;
    values.summary = shortSummary(view, Math.max(20, room)) ?? 'no description is published yet';
    out.push({
      rule_id: vulnRuleId(rule.id, g.manager, `${g.source}-${view.id.toLowerCase()}`),
      framework: rule.framework,
      control_id: rule.control_id,
      framework_mappings: rule.framework_mappings,
      base_severity: view.severity.severity,
      severity,
      severity_reason: known.length ? 'known_exploited' : view.severity.basis,
      title: clip(fillTemplate(rule.finding_title, values), MAX_TITLE),
      description: fillTemplate(rule.finding_description, values),
      remediation: fillTemplate(rule.remediation.summary, values),
      cve_ids: view.cve ? [view.cve] : [],
      tags: ['vulnerability', 'host'],
      details: {
        kind: 'vulnerable-package',
        vulnerability: view.id,
        cve: view.cve,
        package: g.source,
        source_versions: sourceVersions,
        manager: g.manager,
        ecosystem,
        installed: binaries.map((p) => ({ name: p.name, version: p.version, arch: p.arch || null, purl: p.purl, source_name: p.source_name, source_version: p.source_version })),
        source: view.source,
        advisories: view.advisories.map((a) => ({ id: a.id, database: a.source.name, url: a.source.url, fixed_versions: a.fixed_versions, summary: a.summary })),
        fixed_version: view.fixed,
        fix_available: view.fixed !== null,
        severity_basis: {
          basis: view.severity.basis,
          urgency: view.severity.urgency,
          rating: view.severity.rating
            ? { source: view.severity.rating.source.name, method: view.severity.rating.method, score: view.severity.rating.score, vector: view.severity.rating.vector }
            : null,
        },
        known_exploited: known,
        reported_by_agent: view.reported_by_agent,
        upgrade_command: upgrade,
        mitigation,
      },
    });
  }
  out.sort((a, b) => (a.rule_id < b.rule_id ? -1 : a.rule_id > b.rule_id ? 1 : 0));
  return { findings: out, vulnerablePackages: vulnerable.size };
}
