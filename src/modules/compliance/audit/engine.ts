import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import type { Clock } from '../../../platform/clock.js';
import { emitEvents, type NewEvent } from '../../../platform/events/outbox.js';
import { ruleControls, ruleTouches, type Rule } from '../rule-catalog.js';
import { controlState, controlKey, type ControlBaseline, type ControlState } from '../controls/control-state.js';
import { controlTitle } from '../frameworks.js';
import type { FrameworkId } from '../rules/rule-types.js';
import { compileRulesByType, evaluateBatch } from './evaluate.js';
import { reconcileBatch, resolveVanished, type AuditSightings } from './reconcile.js';
import { nodePageReader } from './node-pages.js';
import { ruleText, storeFindingTexts } from '../findings/finding-texts.js';

export interface AuditStats {
  resources_evaluated: number;
  rules_evaluated: number;
  evaluations: number;
  evaluation_errors: number;
  findings_created: number;
  findings_resolved: number;
  findings_reopened: number;
  severity_changes: number;
}

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
  signal?: AbortSignal;
  batchSize?: number;
  /**
   * Called with the control state before the audit writes anything; returns the state to compare
   * the end with. The audit job keeps the first attempt's, so a retry after a crash still emits
   * the control events of the findings the crashed attempt committed.
   */
  baseline?: (current: ControlBaseline) => Promise<ControlBaseline>;
}

export function emptyStats(): AuditStats {
  return {
    resources_evaluated: 0,
    rules_evaluated: 0,
    evaluations: 0,
    evaluation_errors: 0,
    findings_created: 0,
    findings_resolved: 0,
    findings_reopened: 0,
    severity_changes: 0,
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
  const { db, scope, clock } = input;
  const selected = input.rules.filter((r) => input.frameworks.some((f) => ruleTouches(r, f)));
  const rulesByType = compileRulesByType(selected);
  const ruleIds = selected.map((r) => r.id);
  const types = [...rulesByType.keys()];
  const current = await controlState(db, scope, input.enabled, input.rules, clock.now());
  const before = input.baseline ? await input.baseline(current) : current;
  // Every audited rule's text before the first batch, committed: the batches' own (idempotent) store
  // of them then finds them all, so two batches in flight never wait on each other's new text.
  await db.transaction().execute((trx) => storeFindingTexts(trx, scope, selected.map(ruleText)));
  const seen: AuditSightings = { since: clock.now(), at: [] };
  const stats: AuditStats = { ...emptyStats(), rules_evaluated: selected.length };
  const batchSize = input.batchSize ?? 1000;
  const readPage = nodePageReader(db, scope, types, batchSize);
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
      const batch = evaluateBatch(nodes, rulesByType);
      stats.resources_evaluated += nodes.length;
      stats.evaluations += batch.evaluations;
      stats.evaluation_errors += batch.errors;
      const batchTime = clock.now();
      seen.at.push(batchTime);
      const write = reconcileBatch(db, scope, batchTime, batch, nodes.map((n) => n.id), ruleIds).then((counts) => {
        stats.findings_created += counts.created;
        stats.findings_resolved += counts.resolved;
        stats.findings_reopened += counts.reopened;
        stats.severity_changes += counts.severityChanged;
      });
      write.catch(() => undefined);
      inFlight.push(write);
      if (inFlight.length >= 2) await settle();
    }
  } catch (error) {
    loopError = error;
  }
  // Every write finishes (or fails) before the audit reports, so no batch is left half-applied.
  const results = await Promise.allSettled(inFlight.splice(0));
  if (loopError) throw loopError;
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  stats.findings_resolved += await resolveVanished(db, scope, clock.now(), ruleIds, seen);
  const now = clock.now();
  const afterState = await controlState(db, scope, input.enabled, input.rules, now);
  const events = controlEvents(scope, input.runId, before, afterState, new Set(selected.flatMap((r) => ruleControls(r).map((m) => controlKey(m.framework, m.control_id)))));
  if (events.length) await db.transaction().execute((trx) => emitEvents(trx, clock, events));
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
    const wasFailing = before.failing.has(key);
    const isFailing = after.failing.has(key);
    if (wasFailing === isFailing || !after.applicable.get(framework as FrameworkId)) continue;
    const data = { framework, control_id: controlId, title: controlTitle(framework, controlId), triggered_by: runId };
    if (isFailing) {
      newFailures[framework] = (newFailures[framework] ?? 0) + 1;
      events.push({ ...base, type: 'compliance.control_failed', data });
    } else {
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
