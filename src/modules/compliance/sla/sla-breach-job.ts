import { sql } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import { emitEvents, type NewEvent } from '../../../platform/events/outbox.js';
import type { JobDefinition } from '../../../platform/jobs/definition.js';
import type { ScheduleDefinition } from '../../../platform/jobs/scheduler.js';
import { eventFinding, type EventFinding } from '../findings/finding-events.js';

export const SLA_BREACH_JOB = 'compliance.record-sla-breaches';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

/** Findings reported per transaction, and transactions per run (a first audit's CRITICAL findings all breach together). */
const BATCH = 1000;
const MAX_BATCHES = 20;

interface Breached extends EventFinding {
  tenant_id: string;
  workspace_id: string;
  due_at: Date | string;
}

export const slaBreached = (f: Breached): NewEvent => ({
  tenantId: f.tenant_id,
  workspaceId: f.workspace_id,
  type: 'finding.sla_breached',
  data: { finding: eventFinding(f), due_at: new Date(f.due_at).toISOString() },
});

/**
 * Emits finding.sla_breached once for each active finding (open, not covered by a live risk
 * acceptance) whose due time has passed by the application clock, and records it in
 * sla_breached_at in the same transaction. A finding accepted past its due time is reported when
 * the acceptance ends, if it is still overdue then. Migration 0029's triggers clear the record when
 * the finding is resolved, reopened or given a later due time, so a new breach is reported again.
 * SKIP LOCKED lets two processes sweep at once without reporting a finding twice. Returns how many
 * it reported; the rest (beyond MAX_BATCHES) wait for the next run.
 */
export async function sweepSlaBreaches(deps: Deps): Promise<number> {
  const db = deps.database.db;
  const now = deps.clock.now();
  let reported = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const n = await db.transaction().execute(async (trx) => {
      const { rows } = await sql<Breached>`
        WITH due AS (
          SELECT workspace_id, id FROM finding_rows
          WHERE status = 'open' AND due_at IS NOT NULL AND sla_breached_at IS NULL AND due_at <= ${now}
            AND (accepted_until IS NULL OR accepted_until <= ${now})
          ORDER BY due_at
          LIMIT ${BATCH}
          FOR UPDATE SKIP LOCKED
        ),
        marked AS (
          UPDATE finding_rows r SET sla_breached_at = ${now}
          FROM due
          WHERE r.workspace_id = due.workspace_id AND r.id = due.id
          RETURNING r.workspace_id, r.id
        )
        SELECT f.tenant_id, f.workspace_id, f.id, f.rule_id, f.framework, f.control_id, f.severity, f.title, f.description,
          f.resource_id, f.resource_type, f.resource_name, f.region, f.remediation, f.created_at, f.due_at
        FROM marked m
        JOIN findings f ON f.workspace_id = m.workspace_id AND f.id = m.id
        ORDER BY f.due_at, f.id`.execute(trx);
      await emitEvents(trx, deps.clock, rows.map(slaBreached));
      return rows.length;
    });
    reported += n;
    if (n < BATCH) break;
  }
  return reported;
}

export const slaBreachJob = (deps: Deps): JobDefinition => ({
  kind: SLA_BREACH_JOB,
  maxAttempts: 3,
  run: async () => ({ reported: await sweepSlaBreaches(deps) }),
});

/** Every minute: a breach is reported at most a minute (plus queueing) after its due time. */
export const slaBreachSchedule: ScheduleDefinition = { name: 'finding-sla-sweeper', kind: SLA_BREACH_JOB, intervalMs: 60_000 };
