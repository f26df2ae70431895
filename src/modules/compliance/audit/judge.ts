import { evaluateCondition, type CompiledCondition, type ConditionResource } from '../rules/cel.js';
import { missingPaths, type MissingJudgement } from '../rules/missing-paths.js';
import type { UnknownReason } from '../unknowns/tables.js';

/**
 * The outcome of one rule on one resource (issue 22, "fail closed"): violated, passed, or unknown,
 * never nothing. A resource that lacks a path the rule requires is judged by the rule's declared
 * `when_missing` before its condition runs (`byDefault` then names the paths); a condition that
 * fails or runs past its budget is unknown, never a pass.
 */
export type Judgement = { outcome: 'violated' | 'passed'; missing: string[] | null } | { outcome: 'unknown'; reason: UnknownReason; missing: string[]; detail: string | null };

export function judge(compiled: CompiledCondition, rule: MissingJudgement | null, resource: ConditionResource, budgetMs: number): Judgement {
  if (rule) {
    const missing = missingPaths(resource.properties, rule.paths);
    if (missing.length > 0) {
      if (rule.outcome === 'unknown') return { outcome: 'unknown', reason: 'missing_configuration', missing, detail: null };
      return { outcome: rule.outcome === 'violation' ? 'violated' : 'passed', missing };
    }
  }
  const result = evaluateCondition(compiled, resource, budgetMs);
  if ('error' in result) return { outcome: 'unknown', reason: result.budget ? 'budget_exceeded' : 'evaluation_error', missing: NONE, detail: result.error.slice(0, 300) };
  return result.violated ? VIOLATED : PASSED;
}

const NONE: string[] = [];
// Shared results keep the hot path allocation-free for the common outcomes.
const VIOLATED: Judgement = Object.freeze({ outcome: 'violated', missing: null });
const PASSED: Judgement = Object.freeze({ outcome: 'passed', missing: null });
