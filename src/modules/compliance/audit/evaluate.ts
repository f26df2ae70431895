import type { CompiledCondition } from '../rules/cel.js';
import { compiledCondition, type Rule } from '../rule-catalog.js';
import { findingId } from '../findings/identity.js';
import { missingJudgementOf, type MissingJudgement } from '../rules/missing-paths.js';
import type { UnknownReason } from '../unknowns/tables.js';
import { judge } from './judge.js';

export interface AuditNode {
  id: string;
  type: string;
  /** Names the resource in root-cause group labels when it is its own cause. */
  native_id: string;
  name: string;
  region: string;
  account_id: string | null;
  properties: Record<string, unknown>;
  tags: Record<string, unknown>;
}

export interface CompiledRule {
  rule: Rule;
  compiled: CompiledCondition;
  missing: MissingJudgement | null;
}

/**
 * The rules compiled and grouped by the resource type they apply to: what evaluateBatch takes. The
 * audit and the benchmarks' in-memory baseline both build it here, so they evaluate the same thing.
 */
export function compileRulesByType(rules: Rule[]): Map<string, CompiledRule[]> {
  const byType = new Map<string, CompiledRule[]>();
  for (const rule of rules) {
    const list = byType.get(rule.resource_type) ?? [];
    list.push({ rule, compiled: compiledCondition(rule), missing: missingJudgementOf(rule.definition) });
    byType.set(rule.resource_type, list);
  }
  return byType;
}

/** An evaluation whose outcome is unknown, and why (an evaluation_unknowns row). */
export interface UnknownEvaluation {
  rule: Rule;
  node: AuditNode;
  reason: UnknownReason;
  missing: string[];
  detail: string | null;
}

export interface BatchResult {
  /** Finding id → the rule and node that violate. */
  violations: Map<string, { rule: Rule; node: AuditNode }>;
  /** Finding ids evaluated cleanly and not violated. */
  passes: Set<string>;
  /** Finding id → an evaluation that neither violated nor passed. */
  unknowns: Map<string, UnknownEvaluation>;
  evaluations: number;
  /** Evaluations whose condition failed or ran out of time (each is also unknown). */
  errors: number;
  /** A few error samples for the run's stats (rule, resource, message). */
  errorSamples: Array<{ rule_id: string; resource_id: string; error: string }>;
}

/** The resource a rule's condition sees: the node's fields, a missing account id as ''. */
export function resourceOf(node: AuditNode) {
  return {
    id: node.id,
    type: node.type,
    name: node.name,
    region: node.region,
    account_id: node.account_id ?? '',
    properties: node.properties,
    tags: node.tags,
  };
}

/**
 * Evaluates every applicable rule against every node of a batch, in memory, as the audit's thread
 * does (judge.ts): a resource lacking a required path is judged by the rule's when_missing; an
 * evaluation error is unknown, and leaves the finding as it was.
 */
export function evaluateBatch(nodes: AuditNode[], rulesByType: Map<string, CompiledRule[]>): BatchResult {
  const result: BatchResult = { violations: new Map(), passes: new Set(), unknowns: new Map(), evaluations: 0, errors: 0, errorSamples: [] };
  for (const node of nodes) {
    const rules = rulesByType.get(node.type);
    if (!rules) continue;
    const resource = resourceOf(node);
    for (const { rule, compiled, missing } of rules) {
      result.evaluations++;
      const outcome = judge(compiled, missing, resource, Infinity);
      const id = findingId(rule.id, node.id);
      if (outcome.outcome === 'unknown') {
        result.unknowns.set(id, { rule, node, reason: outcome.reason, missing: outcome.missing, detail: outcome.detail });
        if (outcome.reason === 'missing_configuration') continue;
        result.errors++;
        if (result.errorSamples.length < 20) result.errorSamples.push({ rule_id: rule.id, resource_id: node.id, error: outcome.detail ?? '' });
      } else if (outcome.outcome === 'violated') {
        result.violations.set(id, { rule, node });
      } else {
        result.passes.add(id);
      }
    }
  }
  return result;
}
