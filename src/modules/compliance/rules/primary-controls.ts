import type { FrameworkMapping, RuleDefinition } from './rule-types.js';

/**
 * Which controls a rule's failure fails: the ONE definition every control state, score, gap list,
 * report and POA&M item uses (content/rules/README.md, "Which controls a failing rule fails").
 *
 * - NIST SP 800-53: only the rule's primary controls (`nist_controls`, one or two, each from a cited
 *   public mapping). Prowler maps one check to up to 40 NIST controls and enhancements (an IMDSv2 check
 *   to AC-4(28) "Linear Filter Pipelines", a security-group check to SC-7(26) "Classified National
 *   Security System Connections"); those stay on the rule as related mappings, shown but not counted.
 * - CIS AWS, PCI DSS, SOC 2: every mapped requirement (each names the rule's check); these are counted.
 * - A rule without `nist_controls` (a custom rule) counts every control it names: its author chose them.
 *
 * A control is failing when it is one of these controls of a rule with an open finding; the
 * `framework`/`control_id` of a rule (its primary control in its primary framework) always counts.
 */
export interface SplitMappings {
  /** The mappings that count, besides the primary control: what finding texts store. */
  counted: FrameworkMapping[];
  /** NIST mappings that are not primary: shown for reference, never failing. */
  related: FrameworkMapping[];
}

export function splitMappings(rule: Pick<RuleDefinition, 'framework' | 'control_id' | 'framework_mappings'> & { nist_controls?: RuleDefinition['nist_controls'] }): SplitMappings {
  if (!rule.nist_controls?.length) return { counted: rule.framework_mappings, related: [] };
  const primary = new Set(rule.nist_controls.map((c) => c.control_id));
  const counted: FrameworkMapping[] = [];
  const related: FrameworkMapping[] = [];
  for (const m of rule.framework_mappings) {
    if (m.framework !== 'nist-800-53' || primary.has(m.control_id)) counted.push(m);
    else related.push(m);
  }
  // A primary control taken from a mapping other than Prowler's is not among the Prowler-derived mappings.
  for (const id of primary) {
    const own = rule.framework === 'nist-800-53' && rule.control_id === id;
    if (!own && !counted.some((m) => m.framework === 'nist-800-53' && m.control_id === id)) counted.push({ framework: 'nist-800-53', control_id: id });
  }
  return { counted, related };
}

/**
 * The NIST SP 800-53 controls a finding fails (its primary control and counted mappings, as stored in
 * its text): what the FedRAMP POA&M column "Applicable 800-53 Control(s)" holds. Never another
 * framework's id: a finding without NIST controls gets an empty list.
 */
export function nistControlsOf(f: { framework: string; control_id: string; framework_mappings: ReadonlyArray<{ framework: string; control_id: string }> }): string[] {
  const ids = [f, ...f.framework_mappings].filter((m) => m.framework === 'nist-800-53').map((m) => m.control_id);
  return [...new Set(ids)];
}
