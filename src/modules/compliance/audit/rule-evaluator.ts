import type { Rule } from '../rule-catalog.js';
import { findingId } from '../findings/identity.js';
import type { AuditNode, BatchResult } from './evaluate.js';
import { missingJudgementOf } from '../rules/missing-paths.js';
import { MISSING_PATHS_SHOWN, type BudgetSettings, type RuleRunState, type UnknownOutcome } from './budgeted-batch.js';
import type { ThreadReply } from './evaluation-thread.js';
import { acquireThread, releaseThread, ThreadFailure, type EvaluationThread } from './evaluation-threads.js';
import { RUN_BUDGET_FACTOR, STOP_AFTER_EXCEEDED, watchdogMs } from './evaluation-limits.js';
import { budgetMessage } from '../rules/cel.js';

/** How one rule fared in a run: the run's stats list the rules with errors, the rule's status the last run. */
export interface RuleRunReport {
  rule_id: string;
  evaluations: number;
  errors: number;
  budget_exceeded: number;
  /** Evaluations whose outcome is unknown: missing configuration (when_missing: unknown), errors, budget. */
  unknown: number;
  /** Evaluations decided by the rule's when_missing because the resource lacked a path the rule requires. */
  missing_configuration: { violations: number; passes: number; unknown: number };
  /** Paths found missing (the first ones, distinct). */
  missing_paths: string[];
  /** Why the rule was not evaluated on the rest of the run's resources; null when it was evaluated throughout. */
  stopped: string | null;
  /** The first error of the run (a budget error before any other) and its resource. */
  error: { resource_id: string; message: string } | null;
}

export interface EvaluatorOptions {
  budgetMs: number;
  signal?: AbortSignal;
  /** Tests shorten it; the default is evaluation-limits.ts watchdogMs. */
  watchdogMs?: number;
}

/** Evaluations of a batch settled here rather than in the thread (the watchdog ended them). */
interface Settled {
  evaluations: number;
  errors: number;
  unknowns: UnknownOutcome[];
}

/** Restarts of the thread for one batch before the audit gives up (each settles one evaluation). */
const MAX_RESTARTS_PER_BATCH = 10;

/**
 * Evaluates an audit's rules over its batches in a worker thread (evaluation-threads.ts), under the
 * rule budget: each evaluation has `budgetMs` (checked inside the evaluation), a rule that exceeds
 * it too often in the run, or runs too long in total, is stopped for the rest of the run, and an
 * evaluation that does not return at all is ended by stopping the thread (the watchdog), charged to
 * its rule as an exceeded budget, and the batch evaluated again without it on a new thread.
 */
export class RuleEvaluator {
  private thread: EvaluationThread | null = null;
  private state: RuleRunState[];
  private readonly reports: RuleRunReport[];
  private readonly settings: BudgetSettings;
  private readonly watchdog: number;
  /** Whether a report's error is a budget error (those are shown before other errors). */
  private readonly budgetError: boolean[];

  private constructor(
    private readonly rules: Rule[],
    private readonly options: EvaluatorOptions,
  ) {
    this.settings = { budgetMs: options.budgetMs, stopAfterExceeded: STOP_AFTER_EXCEEDED, runBudgetMs: options.budgetMs * RUN_BUDGET_FACTOR };
    this.watchdog = options.watchdogMs ?? watchdogMs(options.budgetMs);
    this.state = rules.map(() => ({ exceeded: 0, elapsedMs: 0, stopped: null }));
    this.reports = rules.map((r) => ({
      rule_id: r.id,
      evaluations: 0,
      errors: 0,
      budget_exceeded: 0,
      unknown: 0,
      missing_configuration: { violations: 0, passes: 0, unknown: 0 },
      missing_paths: [],
      stopped: null,
      error: null,
    }));
    this.budgetError = rules.map(() => false);
  }

  static async open(rules: Rule[], options: EvaluatorOptions): Promise<RuleEvaluator> {
    const evaluator = new RuleEvaluator(rules, options);
    try {
      await evaluator.startThread();
    } catch (error) {
      evaluator.close();
      throw error;
    }
    return evaluator;
  }

  private async startThread(): Promise<EvaluationThread> {
    const thread = (this.thread = acquireThread());
    const reply = await thread.request({
      type: 'rules',
      rules: this.rules.map((r) => ({ id: r.id, resource_type: r.resource_type, condition: r.condition, missing: missingJudgementOf(r.definition) })),
      settings: this.settings,
    });
    if (reply.type !== 'ready') throw new Error(`rule evaluation could not start: ${reply.type === 'error' ? reply.message : reply.type}`);
    return thread;
  }

  async evaluate(nodes: AuditNode[]): Promise<BatchResult> {
    const skip: number[] = [];
    const settled: Settled = { evaluations: 0, errors: 0, unknowns: [] };
    for (let restarts = 0; ; restarts++) {
      const thread = this.thread?.usable ? this.thread : await this.startThread();
      this.stuck = null;
      let reply: ThreadReply;
      try {
        reply = await this.watch(thread, thread.request({ type: 'batch', nodes, state: this.state, skip }));
      } catch (error) {
        if (this.options.signal?.aborted) throw new Error('audit aborted');
        const stuck = error instanceof ThreadFailure ? (this.stuck ?? thread.running()) : null;
        if (!stuck || restarts >= MAX_RESTARTS_PER_BATCH) throw new Error(`rule evaluation failed: ${(error as Error).message}`);
        this.thread = null;
        const message = this.stuck
          ? `${budgetMessage(this.settings.budgetMs)}: stopped after ${Math.round(stuck.ms)} ms without reaching a budget check`
          : `${(error as Error).message} during this evaluation`;
        this.charge(stuck.rule, nodes[stuck.node]!.id, message);
        settled.evaluations++;
        settled.errors++;
        settled.unknowns.push({ node: stuck.node, rule: stuck.rule, reason: 'budget_exceeded', missing: [], detail: message });
        skip.push(stuck.node * this.rules.length + stuck.rule);
        continue;
      }
      if (reply.type === 'error') throw new Error(`rule evaluation failed: ${reply.message}`);
      if (reply.type !== 'result') throw new Error(`rule evaluation answered ${reply.type}`);
      return this.collect(nodes, reply, settled);
    }
  }

  /** The evaluation the watchdog ended, while a batch is in flight. */
  private stuck: { node: number; rule: number; ms: number } | null = null;

  /** The reply, unless the evaluation running overstays the watchdog or the audit is aborted: then the thread is stopped. */
  private watch(thread: EvaluationThread, reply: Promise<ThreadReply>): Promise<ThreadReply> {
    const timer = setInterval(
      () => {
        const running = thread.running();
        if (running && running.ms > this.watchdog && !this.stuck) {
          this.stuck = running;
          void thread.stop('watchdog');
        }
      },
      Math.min(250, Math.max(10, this.watchdog / 4)),
    );
    const abort = () => void thread.stop('audit aborted');
    this.options.signal?.addEventListener('abort', abort, { once: true });
    return reply.finally(() => {
      clearInterval(timer);
      this.options.signal?.removeEventListener('abort', abort);
    });
  }

  /** An evaluation settled here (the thread was stopped during it): an exceeded budget of its rule. */
  private charge(rule: number, resourceId: string, message: string): void {
    const state = this.state[rule]!;
    state.exceeded++;
    state.stopped ??=
      state.exceeded >= this.settings.stopAfterExceeded
        ? `not evaluated: the rule exceeded its evaluation budget of ${this.settings.budgetMs} ms on ${state.exceeded} resources in this run`
        : null;
    const report = this.reports[rule]!;
    report.evaluations++;
    report.errors++;
    report.budget_exceeded++;
    report.unknown++;
    report.stopped = state.stopped;
    if (!this.budgetError[rule]) {
      report.error = { resource_id: resourceId, message };
      this.budgetError[rule] = true;
    }
  }

  private collect(nodes: AuditNode[], reply: Extract<ThreadReply, { type: 'result' }>, settled: Settled): BatchResult {
    const result: BatchResult = { violations: new Map(), passes: new Set(), unknowns: new Map(), evaluations: settled.evaluations, errors: settled.errors, errorSamples: [] };
    for (let i = 0; i < reply.violations.length; i += 2) {
      const node = nodes[reply.violations[i]!]!;
      const rule = this.rules[reply.violations[i + 1]!]!;
      result.violations.set(findingId(rule.id, node.id), { rule, node });
    }
    for (let i = 0; i < reply.passes.length; i += 2) {
      result.passes.add(findingId(this.rules[reply.passes[i + 1]!]!.id, nodes[reply.passes[i]!]!.id));
    }
    for (const u of [...settled.unknowns, ...reply.unknowns]) {
      const rule = this.rules[u.rule]!;
      const node = nodes[u.node]!;
      result.unknowns.set(findingId(rule.id, node.id), { rule, node, reason: u.reason, missing: u.missing, detail: u.detail });
    }
    for (const batch of reply.reports) {
      const report = this.reports[batch.rule]!;
      report.evaluations += batch.evaluations;
      report.errors += batch.errors;
      report.budget_exceeded += batch.exceeded;
      report.unknown += batch.unknown;
      report.missing_configuration.violations += batch.byDefault.violated;
      report.missing_configuration.passes += batch.byDefault.passed;
      report.missing_configuration.unknown += batch.byDefault.unknown;
      for (const path of batch.missingPaths) {
        if (report.missing_paths.length < MISSING_PATHS_SHOWN && !report.missing_paths.includes(path)) report.missing_paths.push(path);
      }
      result.evaluations += batch.evaluations;
      result.errors += batch.errors;
      if (batch.error && (report.error === null || (batch.error.budget && !this.budgetError[batch.rule]))) {
        report.error = { resource_id: nodes[batch.error.node]!.id, message: batch.error.message };
        this.budgetError[batch.rule] = batch.error.budget;
        if (result.errorSamples.length < 20) result.errorSamples.push({ rule_id: report.rule_id, resource_id: report.error.resource_id, error: report.error.message });
      }
    }
    this.state = reply.state;
    this.state.forEach((s, i) => (this.reports[i]!.stopped = s.stopped));
    return result;
  }

  /** Every rule of the run, in the order given. */
  report(): RuleRunReport[] {
    return this.reports;
  }

  /** Gives the thread back (call once, whatever happened). */
  close(): void {
    if (this.thread) releaseThread(this.thread);
    this.thread = null;
  }
}
