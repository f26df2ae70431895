import { createHash } from 'node:crypto';
import type { Rule } from '../rule-catalog.js';
import { missingJudgementOf } from '../rules/missing-paths.js';
import { ruleText } from '../findings/finding-texts.js';
import { VERSION } from '../../../version.js';

/**
 * Bump when what an audit concludes or writes for a node changes without any rule changing (the
 * judging of a rule, the CEL library's semantics, the columns a finding or unknown row takes from
 * the node or its rule): every node is then evaluated again by the next audit. The service's version
 * is part of the digest too, so an upgrade re-evaluates everything once.
 */
export const EVALUATION_VERSION = 1;

/**
 * The version of the rules an audit evaluates on each resource type: a digest of every rule of the
 * type the run evaluates (the run's frameworks intersected with the enabled ones, without the
 * suspended rules), with everything of a rule that decides or is written: condition, required reads
 * and when_missing, severity, controls, failure wording and remediation, group_by. A rule added,
 * changed, deleted, suspended or re-enabled, or a framework enabled or disabled, changes the version
 * of its type and only of its type. Types no rule of the run reads have no version (not audited).
 */
export function rulesetVersions(rules: Rule[]): Map<string, string> {
  const byType = new Map<string, Rule[]>();
  for (const rule of rules) byType.set(rule.resource_type, [...(byType.get(rule.resource_type) ?? []), rule]);
  const versions = new Map<string, string>();
  for (const [type, list] of byType) {
    const hash = createHash('sha256').update(`${EVALUATION_VERSION}\u0000${VERSION}\u0000${type}`);
    for (const rule of [...list].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) hash.update('\u0000').update(JSON.stringify(ruleContent(rule)));
    versions.set(type, hash.digest('base64url').slice(0, 32));
  }
  return versions;
}

/** What of a rule decides a node's outcome or is written with it (not its timestamps or source lines). */
function ruleContent(rule: Rule): unknown[] {
  return [rule.id, rule.condition, missingJudgementOf(rule.definition), rule.severity, rule.framework, rule.control_id, rule.framework_mappings, rule.group_by, ruleText(rule)];
}

/**
 * The edge types each resource type's rules group their findings by (`group_by.edge`): a finding's
 * root-cause group then depends on the neighbours over those edges (findings/grouping.ts), so they
 * are part of the input of the type's nodes. Rule conditions themselves read only the node.
 */
export function edgeInputs(rules: Rule[]): Map<string, string[]> {
  const byType = new Map<string, Set<string>>();
  for (const rule of rules) {
    if (!rule.group_by || !('edge' in rule.group_by)) continue;
    byType.set(rule.resource_type, (byType.get(rule.resource_type) ?? new Set()).add(rule.group_by.edge));
  }
  return new Map([...byType].map(([type, edges]) => [type, [...edges].sort()]));
}
