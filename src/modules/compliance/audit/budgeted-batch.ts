import { compileCondition, ConditionCompileError, type CompiledCondition } from '../rules/cel.js';
import type { MissingJudgement } from '../rules/missing-paths.js';
import type { UnknownReason } from '../unknowns/tables.js';
import { resourceOf, type AuditNode } from './evaluate.js';
import { judge } from './judge.js';

/**
 * One batch of an audit evaluated under the rule budget, in the evaluation thread: every applicable
 * rule against every node, each evaluation under the time budget, with the rules' running account
 * of the run (how often each exceeded its budget, how long it ran) carried from batch to batch by the
 * caller. Rules are referred to by their index in the run's rule list, nodes by their index in the
 * batch.
 */

export interface BudgetRule {
  id: string;
  resource_type: string;
  condition: string;
  /** The paths a resource must have and what the rule concludes without them (built-in rules); null: none declared. */
  missing: MissingJudgement | null;
}

export interface BudgetSettings {
  budgetMs: number;
  /** A rule is stopped for the rest of the run after exceeding the budget this many times... */
  stopAfterExceeded: number;
  /** ...or after running this long in total. */
  runBudgetMs: number;
}

/** A rule's account in the current run. */
export interface RuleRunState {
  exceeded: number;
  elapsedMs: number;
  /** Why the rule is not evaluated any more in this run; null while it is. */
  stopped: string | null;
}

/** What happened to one rule in one batch. */
export interface RuleBatchReport {
  rule: number;
  evaluations: number;
  errors: number;
  exceeded: number;
  /** Evaluations whose outcome is unknown (missing configuration, errors, budget). */
  unknown: number;
  /** Evaluations decided by the rule's when_missing because the resource lacked a required path. */
  byDefault: { violated: number; passed: number; unknown: number };
  /** The first paths found missing in the batch (distinct, at most MISSING_PATHS_SHOWN). */
  missingPaths: string[];
  /** The first error of the rule in the batch, a budget error first. */
  error: { node: number; message: string; budget: boolean } | null;
}

/** An evaluation whose outcome is unknown, and why. */
export interface UnknownOutcome {
  node: number;
  rule: number;
  reason: UnknownReason;
  /** The paths the resource lacks (missing_configuration). */
  missing: string[];
  /** The error (evaluation_error, budget_exceeded). */
  detail: string | null;
}

export interface BudgetedBatch {
  /** Flat (node, rule) pairs. */
  violations: Int32Array;
  passes: Int32Array;
  unknowns: UnknownOutcome[];
  reports: RuleBatchReport[];
}

export const MISSING_PATHS_SHOWN = 20;

export interface CompiledRuleSet {
  rules: BudgetRule[];
  compiled: Array<CompiledCondition | null>;
  /** Why a rule did not compile (a rule file or row changed under a running service). */
  problems: Array<string | null>;
  byType: Map<string, number[]>;
}

const cache = new Map<string, CompiledCondition>();

export function compileRuleSet(rules: BudgetRule[]): CompiledRuleSet {
  const compiled: Array<CompiledCondition | null> = [];
  const problems: Array<string | null> = [];
  const byType = new Map<string, number[]>();
  rules.forEach((rule, index) => {
    let c = cache.get(rule.condition) ?? null;
    let problem: string | null = null;
    if (!c) {
      try {
        c = compileCondition(rule.condition);
        if (cache.size > 5000) cache.clear();
        cache.set(rule.condition, c);
      } catch (error) {
        problem = `condition does not compile: ${error instanceof ConditionCompileError ? error.summary : String(error)}`;
      }
    }
    compiled.push(c);
    problems.push(problem);
    const list = byType.get(rule.resource_type) ?? [];
    list.push(index);
    byType.set(rule.resource_type, list);
  });
  return { rules, compiled, problems, byType };
}

/** Where the thread is, for the watchdog of the caller: the evaluation running and since when. */
export interface Progress {
  begin(node: number, rule: number): void;
  end(): void;
}

export function stopReason(state: RuleRunState, settings: BudgetSettings): string | null {
  if (state.exceeded >= settings.stopAfterExceeded) {
    return `not evaluated: the rule exceeded its evaluation budget of ${settings.budgetMs} ms on ${state.exceeded} resources in this run`;
  }
  if (state.elapsedMs > settings.runBudgetMs) {
    return `not evaluated: the rule ran ${Math.round(state.elapsedMs)} ms in this run, more than its run budget of ${settings.runBudgetMs} ms`;
  }
  return null;
}

/**
 * Evaluates the batch. `state` (one per rule) is updated in place; `skip` holds flat (node, rule)
 * pairs the caller already settled (an evaluation the watchdog ended).
 */
export function evaluateBudgeted(
  set: CompiledRuleSet,
  nodes: AuditNode[],
  state: RuleRunState[],
  settings: BudgetSettings,
  progress: Progress,
  skip: ReadonlySet<number> = new Set(),
): BudgetedBatch {
  const violations: number[] = [];
  const passes: number[] = [];
  const unknowns: UnknownOutcome[] = [];
  const reports = new Map<number, RuleBatchReport>();
  const ruleCount = set.rules.length;
  for (let n = 0; n < nodes.length; n++) {
    const node = nodes[n]!;
    const indexes = set.byType.get(node.type);
    if (!indexes) continue;
    const resource = resourceOf(node);
    for (const r of indexes) {
      if (skip.has(n * ruleCount + r)) continue;
      let report = reports.get(r);
      if (!report) {
        report = { rule: r, evaluations: 0, errors: 0, exceeded: 0, unknown: 0, byDefault: { violated: 0, passed: 0, unknown: 0 }, missingPaths: [], error: null };
        reports.set(r, report);
      }
      report.evaluations++;
      const rule = state[r]!;
      // A rule stopped for the run, or that does not compile, leaves its resources unknown, not passed.
      const refused = rule.stopped ?? set.problems[r];
      if (refused) {
        report.errors++;
        report.unknown++;
        report.error ??= { node: n, message: refused, budget: false };
        unknowns.push({ node: n, rule: r, reason: rule.stopped ? 'budget_exceeded' : 'evaluation_error', missing: [], detail: refused });
        continue;
      }
      progress.begin(n, r);
      const started = performance.now();
      const outcome = judge(set.compiled[r]!, set.rules[r]!.missing, resource, settings.budgetMs);
      rule.elapsedMs += performance.now() - started;
      progress.end();
      if (outcome.outcome === 'unknown') {
        report.unknown++;
        unknowns.push({ node: n, rule: r, reason: outcome.reason, missing: outcome.missing, detail: outcome.detail });
        if (outcome.reason === 'missing_configuration') {
          report.byDefault.unknown++;
          noteMissing(report, outcome.missing);
        } else if (outcome.reason === 'budget_exceeded') {
          report.errors++;
          report.exceeded++;
          rule.exceeded++;
          if (!report.error?.budget) report.error = { node: n, message: outcome.detail!, budget: true };
        } else {
          report.errors++;
          report.error ??= { node: n, message: outcome.detail!, budget: false };
        }
      } else {
        (outcome.outcome === 'violated' ? violations : passes).push(n, r);
        if (outcome.missing) {
          report.byDefault[outcome.outcome]++;
          noteMissing(report, outcome.missing);
        }
      }
      rule.stopped ??= stopReason(rule, settings);
    }
  }
  return { violations: Int32Array.from(violations), passes: Int32Array.from(passes), unknowns, reports: [...reports.values()] };
}

function noteMissing(report: RuleBatchReport, paths: string[]): void {
  for (const path of paths) {
    if (report.missingPaths.length >= MISSING_PATHS_SHOWN) return;
    if (!report.missingPaths.includes(path)) report.missingPaths.push(path);
  }
}
