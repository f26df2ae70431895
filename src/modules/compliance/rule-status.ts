import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inTenant, type Scope } from '../../platform/db/scope.js';
import type { Clock } from '../../platform/clock.js';
import { SYSTEM_ACTOR, writeAudit } from '../../platform/audit/audit-log.js';
import { emitEvents, type NewEvent } from '../../platform/events/outbox.js';
import type { Rule } from './rule-catalog.js';
import type { RuleRunReport } from './audit/rule-evaluator.js';
import { SUSPEND_AFTER_RUNS } from './audit/evaluation-limits.js';
import type { RuleLastRun } from './tables.js';

/**
 * How each rule fares in a tenant's audits (table rule_evaluation_status): the last run that
 * evaluated it and, for the rule budget, in how many consecutive runs it exceeded its evaluation
 * budget. A custom rule that did so in SUSPEND_AFTER_RUNS consecutive runs is suspended: audits skip
 * it (its findings stay as they are) until someone with rules:write updates it, which deletes its
 * status. The suspension is reported as a `compliance.rule_suspended` event and a `rule.suspended`
 * audit-log entry. Built-in rules are never suspended (they cannot be updated, so nothing could
 * re-enable them); a run still stops one that keeps exceeding its budget (evaluation-limits.ts).
 */

export interface RuleEvaluationStatus {
  state: 'active' | 'suspended';
  budget_exceeded_runs: number;
  suspended_at: string | null;
  suspended_reason: string | null;
  last_run: RuleLastRun | null;
}

export const NEVER_EVALUATED: RuleEvaluationStatus = Object.freeze({ state: 'active', budget_exceeded_runs: 0, suspended_at: null, suspended_reason: null, last_run: null });

export async function ruleStatuses(db: Kysely<Database>, tenantId: string, ruleIds?: string[]): Promise<Map<string, RuleEvaluationStatus>> {
  if (ruleIds?.length === 0) return new Map();
  let query = db.selectFrom('rule_evaluation_status').selectAll().where(inTenant(tenantId));
  if (ruleIds) query = query.where('rule_id', 'in', ruleIds);
  const rows = await query.execute();
  return new Map(
    rows.map((r) => [
      r.rule_id,
      {
        state: r.state,
        budget_exceeded_runs: r.budget_exceeded_runs,
        suspended_at: r.suspended_at ? new Date(r.suspended_at).toISOString() : null,
        suspended_reason: r.suspended_reason,
        last_run: r.last_run,
      },
    ]),
  );
}

/** The tenant's suspended rules, which audits skip. */
export async function suspendedRules(db: Kysely<Database>, tenantId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('rule_evaluation_status').select('rule_id').where(inTenant(tenantId)).where('state', '=', 'suspended').execute();
  return new Set(rows.map((r) => r.rule_id));
}

/** The tenant's suspended rules with the reason each was suspended, by rule id (a report's method section). */
export function suspensionReasons(db: Kysely<Database>, tenantId: string): Promise<Array<{ rule_id: string; suspended_reason: string | null }>> {
  return db.selectFrom('rule_evaluation_status').select(['rule_id', 'suspended_reason']).where(inTenant(tenantId)).where('state', '=', 'suspended').orderBy('rule_id').execute();
}

/** Forgets a rule's status (a custom rule updated, deleted or created): it starts afresh. Returns whether it was suspended. */
export async function forgetRuleStatus(trx: Kysely<Database>, tenantId: string, ruleId: string): Promise<boolean> {
  const row = await trx.deleteFrom('rule_evaluation_status').where(inTenant(tenantId)).where('rule_id', '=', ruleId).returning('state').executeTakeFirst();
  return row?.state === 'suspended';
}

/**
 * Records what a finished run did with each of its rules and suspends the custom rules that have now
 * exceeded their budget in SUSPEND_AFTER_RUNS consecutive runs. Idempotent per run (a retried audit
 * records its run once). A custom rule updated or deleted since the run read it is left alone: the
 * run evaluated a condition that no longer exists. Returns the ids of the rules suspended now.
 */
export async function recordRuleRuns(
  db: Kysely<Database>,
  clock: Clock,
  scope: Scope,
  runId: string,
  budgetMs: number,
  rules: Rule[],
  reports: RuleRunReport[],
): Promise<string[]> {
  if (reports.length === 0) return [];
  const now = clock.now();
  const byId = new Map(rules.map((r) => [r.id, r]));
  return db.transaction().execute(async (trx) => {
    const ids = reports.map((r) => r.rule_id);
    const previous = new Map(
      (await trx.selectFrom('rule_evaluation_status').selectAll().where(inTenant(scope.tenantId)).where('rule_id', 'in', ids).forUpdate().execute()).map((r) => [r.rule_id, r]),
    );
    const customIds = rules.filter((r) => !r.builtin).map((r) => r.id);
    const custom = new Map(
      customIds.length === 0
        ? []
        : (await trx.selectFrom('custom_rules').select(['id', 'updated_at']).where(inTenant(scope.tenantId)).where('id', 'in', customIds).forUpdate().execute()).map((r) => [
            r.id,
            new Date(r.updated_at).getTime(),
          ]),
    );
    const rows = [];
    const suspended: Array<{ rule: Rule; runs: number; reason: string }> = [];
    for (const report of reports) {
      const rule = byId.get(report.rule_id)!;
      if (!rule.builtin && custom.get(rule.id) !== rule.updated_at?.getTime()) continue;
      const before = previous.get(rule.id);
      if (before?.state === 'suspended') continue;
      const sameRun = before?.last_run?.run_id === runId;
      const runs = sameRun ? before!.budget_exceeded_runs : report.budget_exceeded > 0 ? (before?.budget_exceeded_runs ?? 0) + 1 : 0;
      const suspend = !rule.builtin && runs >= SUSPEND_AFTER_RUNS;
      const reason = suspend
        ? `exceeded its evaluation budget of ${budgetMs} ms in ${runs} consecutive audit runs` +
          (report.error ? `; last on ${report.error.resource_id}: ${report.error.message}` : '')
        : null;
      if (suspend) suspended.push({ rule, runs, reason: reason! });
      const lastRun: RuleLastRun = {
        run_id: runId,
        workspace_id: scope.workspaceId,
        at: now.toISOString(),
        evaluations: report.evaluations,
        errors: report.errors,
        budget_exceeded: report.budget_exceeded,
        stopped: report.stopped,
        error: report.error,
      };
      rows.push({
        tenant_id: scope.tenantId,
        rule_id: rule.id,
        state: suspend ? ('suspended' as const) : ('active' as const),
        budget_exceeded_runs: runs,
        last_run: json(lastRun),
        suspended_at: suspend ? now : null,
        suspended_reason: reason,
        updated_at: now,
      });
    }
    if (rows.length) {
      await trx
        .insertInto('rule_evaluation_status')
        .values(rows)
        .onConflict((oc) =>
          oc.columns(['tenant_id', 'rule_id']).doUpdateSet((eb) => ({
            state: eb.ref('excluded.state'),
            budget_exceeded_runs: eb.ref('excluded.budget_exceeded_runs'),
            last_run: eb.ref('excluded.last_run'),
            suspended_at: eb.ref('excluded.suspended_at'),
            suspended_reason: eb.ref('excluded.suspended_reason'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute();
    }
    const events: NewEvent[] = [];
    for (const { rule, runs, reason } of suspended) {
      const data = { rule_id: rule.id, title: rule.title, reason, budget_exceeded_runs: runs, suspended_at: now.toISOString(), triggered_by: runId };
      events.push({ tenantId: scope.tenantId, workspaceId: scope.workspaceId, type: 'compliance.rule_suspended', data });
      await writeAudit(trx, clock, SYSTEM_ACTOR, {
        tenantId: scope.tenantId,
        workspaceId: scope.workspaceId,
        action: 'rule.suspended',
        targetType: 'rule',
        targetId: rule.id,
        details: { reason, run_id: runId },
      });
    }
    if (events.length) await emitEvents(trx, clock, events);
    return suspended.map((s) => s.rule.id);
  });
}
