import { sql } from 'kysely';
import { rescoreFindings } from '../findings/rescore.js';
import type { AppDeps } from '../../../deps.js';
import { json } from '../../../platform/db/schema.js';
import type { JobDefinition } from '../../../platform/jobs/definition.js';
import { allRules } from '../rule-catalog.js';
import { enabledFrameworks } from '../settings-service.js';
import type { FrameworkId } from '../rules/rule-types.js';
import { runAudit } from './engine.js';
import { loadBaseline, storeBaseline } from '../controls/control-state.js';
import { AUDIT_JOB, requestAudit } from './audit-service.js';
import { EMBEDDED_BATCH_SIZE, EMBEDDED_WRITES_IN_FLIGHT, othersFirst } from './embedded-pacing.js';
import { databaseAuditLock } from './workspace-lock.js';

/** Findings an audit creates or resolves before the database's statistics of them are refreshed. */
const ANALYZE_AFTER = 1_000;

/** The audit as a queued job: the run row follows the job through running, succeeded and failed. */
export function auditJob(deps: Pick<AppDeps, 'database' | 'clock' | 'log' | 'config'>): JobDefinition {
  const db = deps.database.db;
  return {
    kind: AUDIT_JOB,
    maxAttempts: 3,
    leaseMs: 120_000,
    async run(_payload, ctx) {
      const run = await db
        .updateTable('audit_runs')
        .set({ status: 'running', started_at: ctx.clock.now(), error: null })
        .where('id', '=', ctx.job.id)
        .returningAll()
        .executeTakeFirst();
      if (!run) return { skipped: 'run deleted' };
      const scope = { tenantId: run.tenant_id, workspaceId: run.workspace_id };
      const enabled = await enabledFrameworks(db, scope.tenantId);
      const frameworks = run.frameworks.filter((f): f is FrameworkId => (enabled as string[]).includes(f));
      const stats = await runAudit({
        db,
        clock: ctx.clock,
        scope,
        runId: run.id,
        frameworks,
        enabled,
        rules: await allRules(db, scope.tenantId),
        budgetMs: deps.config.ruleBudgetMs,
        ...(deps.database.kind === 'pglite' ? { batchSize: EMBEDDED_BATCH_SIZE, writesInFlight: EMBEDDED_WRITES_IN_FLIGHT, pace: () => othersFirst(deps.database.pool) } : {}),
        signal: ctx.signal,
        // One audit of a workspace at a time, across processes too (a discovery job audits as well).
        lock: databaseAuditLock(deps.database),
        // The first attempt records where the run started; a retry compares with that, not with the
        // findings its crashed predecessor committed. One statement keeps whichever came first, also
        // against an attempt that lost its lease and is still running.
        baseline: async (current) => {
          const row = await db
            .updateTable('audit_runs')
            .set({ baseline: sql`COALESCE(baseline, ${json(storeBaseline(current))}::jsonb)` })
            .where('id', '=', run.id)
            .returning('baseline')
            .executeTakeFirst();
          return row?.baseline ? loadBaseline(row.baseline) : current;
        },
      });
      // The stored risk scores follow what the audit changed: findings opened and resolved (exposure
      // findings among them, which expose their neighbours), severities.
      await rescoreFindings(db, scope, ctx.clock.now());
      // After an audit that moved many findings the planner's statistics describe the tables before it:
      // PGlite runs no autovacuum at all, and PostgreSQL's analyzes them a minute or more later, or
      // never where autovacuum is off. Until then the findings screens run plans made for nearly empty
      // tables (at 118,761 findings, /findings/grouped answered nothing within 5 s on PGlite; on
      // PostgreSQL every rollup read scanned all open findings for lapsed acceptances: 680 ms instead
      // of 0.3 ms). ANALYZE samples a fixed number of rows, so it costs the same at any size.
      if (stats.findings_created + stats.findings_resolved >= ANALYZE_AFTER) {
        await sql`ANALYZE finding_rows, finding_texts, finding_rollup, finding_group_rollup, finding_group_rank, evaluation_unknowns`.execute(db);
      }
      return stats;
    },
    async onSucceeded(job, result, trx) {
      const run = await trx
        .updateTable('audit_runs')
        .set({ status: 'succeeded', finished_at: deps.clock.now(), stats: json(result) })
        .where('id', '=', job.id)
        .returningAll()
        .executeTakeFirst();
      if (run && run.pending_frameworks.length > 0) {
        await requestAudit(trx, deps, { tenantId: run.tenant_id, workspaceId: run.workspace_id }, run.pending_frameworks as FrameworkId[], 'follow-up', run.requested_by);
      }
    },
    async onFailed(job, error, trx) {
      await trx.updateTable('audit_runs').set({ status: 'failed', finished_at: deps.clock.now(), error }).where('id', '=', job.id).execute();
    },
  };
}
