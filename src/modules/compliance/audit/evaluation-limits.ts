/**
 * The limits on rule evaluation in an audit (README, Compliance, "Rule budget"). One evaluation is
 * one rule on one resource; its time budget is `CONTROLGRAPH_RULE_BUDGET_MS` (config.ts).
 */

/** The time budget of one evaluation when the configuration does not say (CONTROLGRAPH_RULE_BUDGET_MS). */
export const DEFAULT_RULE_BUDGET_MS = 100;

/** A rule that exceeds its budget on this many resources of one run is not evaluated further in that run. */
export const STOP_AFTER_EXCEEDED = 3;

/** Nor is a rule that has spent this many budgets in total in one run (30 s at the default 100 ms). */
export const RUN_BUDGET_FACTOR = 300;

/** A custom rule that exceeded its budget in this many consecutive runs is suspended. */
export const SUSPEND_AFTER_RUNS = 3;

/**
 * An evaluation still running this long is ended by stopping its thread. The budget is checked
 * inside an evaluation at every comprehension step and `matches()` call; this covers anything that
 * runs long between two checks.
 */
export function watchdogMs(budgetMs: number): number {
  return Math.max(2_000, 10 * budgetMs);
}

/** Heap of an evaluation thread: an expression that builds huge values fails, not the process. */
export const THREAD_HEAP_MB = 512;
