import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { SEVERITIES, type Severity } from '../compliance/rules/rule-types.js';
import { createKevLookup } from '../vulndb/index.js';
import type { DesiredFinding } from './findings-sync.js';
import { fillTemplate, type TemplateRule } from './host-rules.js';
import type { PackageWithMatch } from './inventory-repo.js';
import { cvssSeverities, highestVersion, upgradeCommand } from './packages.js';

/**
 * One finding per vulnerable installed package (per manager and name: the architectures and versions
 * installed under one name share it). Its CVEs are the store's matches plus those the agent reported;
 * its base severity is the highest CVSS v3 severity the store knows for them (the rule's when none is
 * known), and its severity CRITICAL when one of them is in the KEV catalog. When the package is
 * upgraded past the fix or removed, the next report resolves the finding.
 */

const RULE_NAME = /^[a-z0-9][a-z0-9.+-]*$/;
const MAX_RULE_ID = 100;

/** Rule id of a package's finding: `<prefix>-<manager>-<name>`, colon-free, at most 100 characters. */
export function vulnRuleId(prefix: string, manager: string, name: string): string {
  const plain = `${prefix}-${manager}-${name}`;
  if (RULE_NAME.test(name) && plain.length <= MAX_RULE_ID) return plain;
  const hash = createHash('sha256').update(`${manager}\u0000${name}`).digest('hex').slice(0, 8);
  const slug = name.toLowerCase().replace(/[^a-z0-9.+-]+/g, '-').replace(/^-+|-+$/g, '');
  return `${prefix}-${manager}-${slug}`.slice(0, MAX_RULE_ID - 9).replace(/-+$/, '') + `-${hash}`;
}

const rank = (s: Severity) => SEVERITIES.length - SEVERITIES.indexOf(s);

function maxSeverity(values: Iterable<string>, fallback: Severity): Severity {
  let best: Severity | null = null;
  for (const v of values) {
    if (!(SEVERITIES as readonly string[]).includes(v)) continue;
    if (!best || rank(v as Severity) > rank(best)) best = v as Severity;
  }
  return best ?? fallback;
}

interface Group {
  manager: string;
  name: string;
  instances: PackageWithMatch[];
}

export async function vulnerabilityFindings(db: Kysely<Database>, rule: TemplateRule, packages: readonly PackageWithMatch[]): Promise<DesiredFinding[]> {
  const groups = new Map<string, Group>();
  for (const p of packages) {
    if (p.match.advisories.length === 0 && p.reported_cves.length === 0) continue;
    const ruleId = vulnRuleId(rule.id, p.manager, p.name);
    let group = groups.get(ruleId);
    if (!group) groups.set(ruleId, (group = { manager: p.manager, name: p.name, instances: [] }));
    group.instances.push(p);
  }
  if (groups.size === 0) return [];
  const allCves = new Set<string>();
  for (const g of groups.values()) for (const p of g.instances) for (const c of [...p.match.matched_cves, ...p.reported_cves]) allCves.add(c);
  const [cvss, kev] = await Promise.all([cvssSeverities(db, [...allCves]), createKevLookup(db).isKnownExploited([...allCves])]);

  const out: DesiredFinding[] = [];
  for (const [ruleId, g] of [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const cves = [...new Set(g.instances.flatMap((p) => [...p.match.matched_cves, ...p.reported_cves]))].sort();
    const advisories = [...new Map(g.instances.flatMap((p) => p.match.advisories).map((a) => [a.id, a])).values()].sort((a, b) => a.id.localeCompare(b.id));
    const ecosystem = g.instances[0]!.ecosystem;
    const fixed = highestVersion(ecosystem, [...new Set(advisories.flatMap((a) => a.fixed_versions))]);
    const unfixed = advisories.filter((a) => a.fixed_versions.length === 0).map((a) => a.id);
    const known = cves.filter((c) => kev.has(c));
    const base = maxSeverity(cves.map((c) => cvss.get(c) ?? ''), rule.severity);
    const severity: Severity = known.length ? 'CRITICAL' : base;
    const versions = [...new Set(g.instances.map((p) => p.version))];
    const values = {
      name: g.name,
      version: versions.join(', '),
      manager: g.manager,
      cve_count: String(cves.length),
      cves: cves.length ? cves.slice(0, 20).join(', ') + (cves.length > 20 ? `, … (${cves.length - 20} more)` : '') : 'none assigned',
      advisories: advisories.length ? advisories.slice(0, 20).map((a) => a.id).join(', ') : 'reported by the agent',
      fixed: fixed ?? 'a fixed version (none is published yet: mitigate or remove the package)',
      upgrade_command: upgradeCommand(g.manager, g.name),
    };
    out.push({
      rule_id: ruleId,
      framework: rule.framework,
      control_id: rule.control_id,
      framework_mappings: rule.framework_mappings,
      base_severity: base,
      severity,
      severity_reason: known.length ? 'known_exploited' : 'cvss',
      title: fillTemplate(rule.title, values),
      description: fillTemplate(rule.description, values),
      remediation: fillTemplate(rule.remediation.summary, values),
      cve_ids: cves,
      tags: ['vulnerability', 'host'],
      details: {
        kind: 'vulnerable-package',
        package: g.name,
        manager: g.manager,
        installed: g.instances.map((p) => ({ version: p.version, arch: p.arch || null, purl: p.purl, source_name: p.source_name, source_version: p.source_version })),
        ecosystem,
        advisories: advisories.map((a) => ({ id: a.id, source: a.source, cve_ids: a.cve_ids, fixed_versions: a.fixed_versions, summary: a.summary })),
        fixed_version: fixed,
        unfixed_advisories: unfixed,
        known_exploited: known,
        reported_cves: [...new Set(g.instances.flatMap((p) => p.reported_cves))].sort(),
        upgrade_command: values.upgrade_command,
      },
    });
  }
  return out;
}
