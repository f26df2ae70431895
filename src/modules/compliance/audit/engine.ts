import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import type { Clock } from '../../../platform/clock.js';
import { emitEvents, type NewEvent } from '../../../platform/events/outbox.js';
import { ruleControls, ruleTouches, type Rule } from '../rule-catalog.js';
import { controlState, controlKey, type ControlBaseline, type ControlState } from '../controls/control-state.js';
import { controlTitle } from '../frameworks.js';
import type { FrameworkId } from '../rules/rule-types.js';
import { RuleEvaluator, type RuleRunReport } from './rule-evaluator.js';
import { recordRuleRuns, suspendedRules } from '../rule-status.js';
import { DEFAULT_RULE_BUDGET_MS } from './evaluation-limits.js';
import { reconcileBatch, resolveVanished, type AuditSightings } from './reconcile.js';
import { clearVanishedUnknowns, hasUnknowns } from './record-unknowns.js';
import { processAuditLock, type AuditLock } from './workspace-lock.js';
import { countNodes, nodePageReader } from './node-pages.js';
import { edgeInputs, rulesetVersions } from './ruleset-version.js';
import { settleRemovals } from './vanished.js';
import { retextFindings, ruleText, storeFindingTexts } from '../findings/finding-texts.js';
import { recordPoints } from '../history/snapshot.js';

export interface AuditStats {
  /** Resources of the audited types this run evaluated (new, changed, or under changed rules). */
  resources_evaluated: number;
  /**
   * Resources of the audited types this run did not evaluate: unchanged (properties, tags, the other
   * fields a rule reads, and the neighbours its rules group by) since an audit evaluated them under
   * the same rule set; their findings and unknown evaluations stay as they are (audit/incremental.ts).
   */
  resources_unchanged: number;
  rules_evaluated: number;
  evaluations: number;
  /** Evaluations whose condition failed or ran past its budget (each is also unknown). */
  evaluation_errors: number;
  /**
   * Evaluations whose outcome is unknown: the resource lacked a path the rule requires and its
   * content says `when_missing: unknown`, or the evaluation failed (evaluation_errors). Each is an
   * evaluation_unknowns row after the run (GET /evaluations/unknown).
   */
  unknown: number;
  /** Evaluations decided by a rule's when_missing because the resource lacked a path it requires. */
  missing_configuration: { violations: number; passes: number; unknown: number };
  /**
   * The rules that found resources lacking configuration, with how they judged them and the paths
   * missing (most unknown first, at most RULE_ERRORS_SHOWN).
   */
  rule_missing: Array<{ rule_id: string; violations: number; passes: number; unknown: number; missing_paths: string[] }>;
  findings_created: number;
  findings_resolved: number;
  findings_reopened: number;
  severity_changes: number;
  /** Evaluations that exceeded the rule budget (each is also an evaluation error). */
  budget_exceeded: number;
  /** The rules with evaluation errors in this run and the first reason of each (at most RULE_ERRORS_SHOWN). */
  rule_errors: RuleRunReport[];
  /** Custom rules this run suspended (they exceeded their budget in too many consecutive runs). */
  rules_suspended: string[];
  /** Suspended rules this run did not evaluate. */
  rules_skipped: string[];
}

export const RULE_ERRORS_SHOWN = 100;

export interface AuditInput {
  db: Kysely<Database>;
  clock: Clock;
  scope: Scope;
  runId: string;
  /** Frameworks of this run (already intersected with the tenant's enabled ones). */
  frameworks: FrameworkId[];
  /** Every framework the tenant has enabled (the score covers them all). */
  enabled: FrameworkId[];
  rules: Rule[];
  /** The time budget of one evaluation (config ruleBudgetMs; DEFAULT_RULE_BUDGET_MS when not given). */
  budgetMs?: number;
  signal?: AbortSignal;
  batchSize?: number;
  /** Batch writes that may be in flight while the next batch is read and evaluated (2 by default). */
  writesInFlight?: number;
  /**
   * Awaited before each batch's read and write. On PGlite (one connection, run on the service's own
   * thread) it lets the requests already waiting for the connection go first (audit-job.ts).
   */
  pace?: () => Promise<void>;
  /**
   * Called with the control state before the audit writes anything; returns the state to compare
   * the end with. The audit job keeps the first attempt's, so a retry after a crash still emits
   * the control events of the findings the crashed attempt committed.
   */
  baseline?: (current: ControlBaseline) => Promise<ControlBaseline>;
  /**
   * Serialises the audits of one workspace (workspace-lock.ts): the jobs pass databaseAuditLock, which
   * also holds across processes on PostgreSQL; without one, audits of this process queue in memory.
   */
  lock?: AuditLock;
}

export function emptyStats(): AuditStats {
  return {
    resources_evaluated: 0,
    resources_unchanged: 0,
    rules_evaluated: 0,
    evaluations: 0,
    evaluation_errors: 0,
    unknown: 0,
    missing_configuration: { violations: 0, passes: 0, unknown: 0 },
    rule_missing: [],
    findings_created: 0,
    findings_resolved: 0,
    findings_reopened: 0,
    severity_changes: 0,
    budget_exceeded: 0,
    rule_errors: [],
    rules_suspended: [],
    rules_skipped: [],
  };
}

/** Overall score moves of this many points or more emit compliance.score_changed. */
export const SCORE_EVENT_THRESHOLD = 5;

/**
 * Evaluates the rules of the run's frameworks over the workspace's nodes in batches (keyset pages by type and
 * id, so memory stays flat), reconciles findings per batch with their events, resolves findings of
 * vanished resources, then emits control and score changes.
 */
export async function runAudit(input: AuditInput): Promise<AuditStats> {
  const lock = input.lock ?? processAuditLock;
  return lock(input.scope.workspaceId, input.signal, () => audit(input));
}

/** The audit itself, while it holds its workspace's lock. */
async function audit(input: AuditInput): Promise<AuditStats> {
  const { db, scope, clock } = input;
  const budgetMs = input.budgetMs ?? DEFAULT_RULE_BUDGET_MS;
  const touching = input.rules.filter((r) => input.frameworks.some((f) => ruleTouches(r, f)));
  // A rule suspended for exceeding its budget is skipped, and its findings stay as they are.
  const suspended = await suspendedRules(db, scope.tenantId);
  const selected = touching.filter((r) => !suspended.has(r.id));
  const ruleIds = selected.map((r) => r.id);
  const types = [...new Set(selected.map((r) => r.resource_type))];
  const current = await controlState(db, scope, input.enabled, input.rules, clock.now());
  const before = input.baseline ? await input.baseline(current) : current;
  // Every audited rule's text before the first batch, committed: the batches' own (idempotent) store
  // of them then finds them all, so two batches in flight never wait on each other's new text.
  await db.transaction().execute((trx) => storeFindingTexts(trx, scope, selected.map(ruleText)));
  // Findings whose rule's text changed (its failure wording, its counted controls) take the new one.
  await retextFindings(db, scope, selected);
  const seen: AuditSightings = { since: clock.now(), at: [] };
  const unknowns = { runId: input.runId, prior: await hasUnknowns(db, scope, ruleIds) };
  const stats: AuditStats = { ...emptyStats(), rules_evaluated: selected.length, rules_skipped: touching.filter((r) => suspended.has(r.id)).map((r) => r.id) };
  // Rules are evaluated in a worker thread, under the rule budget (rule-evaluator.ts).
  const evaluator = await RuleEvaluator.open(selected, { budgetMs, signal: input.signal });
  const batchSize = input.batchSize ?? 1000;
  const pace = input.pace ?? (async () => undefined);
  // Only nodes whose input or rule-set version changed since an audit recorded them are read.
  const versions = rulesetVersions(selected);
  const audited = await countNodes(db, scope, types);
  const reader = nodePageReader(db, scope, types, batchSize, { versions, edges: edgeInputs(selected) });
  const readPage = async (from?: Parameters<typeof reader>[0]) => {
    await pace();
    return reader(from);
  };
  let next = readPage();
  // Batches touch disjoint resources, so the writes of one batch may run while the next is read and
  // evaluated: on PostgreSQL the database works on another core meanwhile. At most two in flight.
  const inFlight: Array<Promise<void>> = [];
  const settle = async () => {
    await inFlight.shift();
  };
  let loopError: unknown = null;
  try {
    for (;;) {
      if (input.signal?.aborted) throw new Error('audit aborted');
      const page = await next;
      if (!page) break;
      const { nodes } = page;
      next = readPage(page);
      next.catch(() => undefined);
      const batch = await evaluator.evaluate(nodes);
      stats.resources_evaluated += nodes.length;
      stats.evaluations += batch.evaluations;
      stats.evaluation_errors += batch.errors;
      stats.unknown += batch.unknowns.size;
      const batchTime = clock.now();
      seen.at.push(batchTime);
      const write = pace()
        .then(() =>
          reconcileBatch(
            db,
            scope,
            batchTime,
            batch,
            nodes.map((n) => n.id),
            ruleIds,
            unknowns,
            { nodes, versions },
          ),
        )
        .then((counts) => {
          stats.findings_created += counts.created;
          stats.findings_resolved += counts.resolved;
          stats.findings_reopened += counts.reopened;
          stats.severity_changes += counts.severityChanged;
        });
      write.catch(() => undefined);
      inFlight.push(write);
      if (inFlight.length >= (input.writesInFlight ?? 2)) await settle();
    }
  } catch (error) {
    loopError = error;
  } finally {
    evaluator.close();
  }
  // Every write finishes (or fails) before the audit reports, so no batch is left half-applied.
  const results = await Promise.allSettled(inFlight.splice(0));
  if (loopError) throw loopError;
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  stats.findings_resolved += await resolveVanished(db, scope, clock.now(), ruleIds, seen);
  await clearVanishedUnknowns(db, scope);
  await settleRemovals(db, scope);
  stats.resources_unchanged = Math.max(0, audited - stats.resources_evaluated);
  const reports = evaluator.report();
  for (const r of reports) {
    stats.missing_configuration.violations += r.missing_configuration.violations;
    stats.missing_configuration.passes += r.missing_configuration.passes;
    stats.missing_configuration.unknown += r.missing_configuration.unknown;
  }
  stats.rule_missing = reports
    .filter((r) => r.missing_paths.length > 0)
    .map((r) => ({ rule_id: r.rule_id, ...r.missing_configuration, missing_paths: r.missing_paths }))
    .sort((a, b) => b.unknown - a.unknown || b.violations - a.violations || a.rule_id.localeCompare(b.rule_id))
    .slice(0, RULE_ERRORS_SHOWN);
  stats.budget_exceeded = reports.reduce((n, r) => n + r.budget_exceeded, 0);
  stats.rule_errors = reports
    .filter((r) => r.errors > 0)
    .sort((a, b) => b.budget_exceeded - a.budget_exceeded || b.errors - a.errors)
    .slice(0, RULE_ERRORS_SHOWN);
  stats.rules_suspended = await recordRuleRuns(db, clock, scope, input.runId, budgetMs, selected, reports);
  const now = clock.now();
  const afterState = await controlState(db, scope, input.enabled, input.rules, now);
  const events = controlEvents(scope, input.runId, before, afterState, new Set(selected.flatMap((r) => ruleControls(r).map((m) => controlKey(m.framework, m.control_id)))));
  // The end state is also the run's history point (and the day's, until a later one): recorded with
  // the events that compare it with the start, from the same computation.
  await db.transaction().execute(async (trx) => {
    if (events.length) await emitEvents(trx, clock, events);
    await recordPoints(trx, scope, afterState, now, input.runId);
  });
  return stats;
}

/**
 * compliance.control_failed / control_passed for controls of the audited rules whose state flipped,
 * and compliance.score_changed for the overall score and each framework moving 5 points or more.
 */
function controlEvents(scope: Scope, runId: string, before: ControlBaseline, after: ControlState, audited: Set<string>): NewEvent[] {
  const events: NewEvent[] = [];
  const base = { tenantId: scope.tenantId, workspaceId: scope.workspaceId };
  const newFailures: Record<string, number> = {};
  const newPasses: Record<string, number> = {};
  for (const key of audited) {
    const [framework, controlId] = key.split('\u0000') as [string, string];
    if (!after.applicable.get(framework as FrameworkId)) continue;
    const wasFailing = before.failing.has(key);
    const isFailing = after.failing.has(key);
    // An unknown control is not passing: control_passed only when neither failing nor unknown remains.
    const wasPassing = !wasFailing && !before.unknown.has(key);
    const isPassing = !isFailing && !after.unknown.has(key);
    const data = { framework, control_id: controlId, title: controlTitle(framework, controlId), triggered_by: runId };
    if (isFailing && !wasFailing) {
      newFailures[framework] = (newFailures[framework] ?? 0) + 1;
      events.push({ ...base, type: 'compliance.control_failed', data });
    } else if (isPassing && !wasPassing) {
      newPasses[framework] = (newPasses[framework] ?? 0) + 1;
      events.push({ ...base, type: 'compliance.control_passed', data });
    }
  }
  const scoreEvent = (framework: string, previous: number, current: number, failures: number, passes: number) => {
    if (Math.abs(current - previous) < SCORE_EVENT_THRESHOLD) return;
    events.push({
      ...base,
      type: 'compliance.score_changed',
      data: { framework, previous_score: previous, current_score: current, delta: current - previous, triggered_by: runId, new_failures: failures, new_passes: passes },
    });
  };
  const sum = (record: Record<string, number>) => Object.values(record).reduce((a, b) => a + b, 0);
  scoreEvent('overall', before.overall, after.overall, sum(newFailures), sum(newPasses));
  for (const [framework, current] of after.scores) {
    scoreEvent(framework, before.scores.get(framework) ?? 100, current, newFailures[framework] ?? 0, newPasses[framework] ?? 0);
  }
  return events;
}
