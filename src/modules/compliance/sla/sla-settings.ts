import { inTenant, tenantIs } from '../../../platform/db/scope.js';
import { sql, type Kysely } from 'kysely';
import type { Database, Timestamp } from '../../../platform/db/schema.js';
import { SEVERITIES, type Severity } from '../rules/rule-types.js';

/**
 * Per-tenant SLA windows (issue 23 item 5): an open finding is due this many hours after it was
 * opened. Defaults from the interface's typical response times (CRITICAL within hours, HIGH 24-48 h,
 * MEDIUM 1-2 weeks, LOW 30-90 days, INFO backlog); migration 0029's finding_sla_hours() holds the
 * same numbers, and triggers there set each finding's due_at from them.
 */
export const SLA_DEFAULT_HOURS: Readonly<Record<Severity, number | null>> = {
  CRITICAL: 24,
  HIGH: 48,
  MEDIUM: 14 * 24,
  LOW: 90 * 24,
  INFO: null,
};

/** Ten years: a longer window is a mistake, not a policy. */
export const SLA_MAX_HOURS = 87_600;

/** Hours per severity; null: the severity has no SLA. */
export type SlaHours = Record<Severity, number | null>;
/** A PUT's changes: hours sets an override, null removes it (back to the default). */
export type SlaChanges = Partial<Record<Severity, number | null>>;

declare module '../../../platform/db/schema.js' {
  interface Database {
    /** The tenant's overrides (migration 0029); a severity without a row takes SLA_DEFAULT_HOURS. */
    finding_sla_settings: { tenant_id: string; severity: Severity; hours: number; updated_at: Timestamp };
  }
}

/** The tenant's effective windows: its overrides over the defaults. */
export async function slaHours(db: Kysely<Database>, tenantId: string): Promise<SlaHours> {
  const rows = await db.selectFrom('finding_sla_settings').select(['severity', 'hours']).where(inTenant(tenantId)).execute();
  const hours: SlaHours = { ...SLA_DEFAULT_HOURS };
  for (const row of rows) hours[row.severity] = row.hours;
  return hours;
}

/**
 * Applies a tenant's SLA changes in the caller's transaction and moves the due time of the open
 * findings of the changed severities in every workspace of the tenant (their window still counts from
 * when each was opened). A breach already reported stays reported while the new due time is not
 * after it; otherwise the finding may breach again, and is reported then.
 */
export async function updateSla(trx: Kysely<Database>, tenantId: string, changes: SlaChanges, now: Date): Promise<void> {
  const severities = SEVERITIES.filter((s) => s in changes);
  if (severities.length === 0) return;
  for (const severity of severities) {
    const hours = changes[severity];
    if (hours === null || hours === undefined) {
      await trx.deleteFrom('finding_sla_settings').where(inTenant(tenantId)).where('severity', '=', severity).execute();
    } else {
      await trx
        .insertInto('finding_sla_settings')
        .values({ tenant_id: tenantId, severity, hours, updated_at: now })
        .onConflict((oc) => oc.columns(['tenant_id', 'severity']).doUpdateSet({ hours, updated_at: now }))
        .execute();
    }
  }
  // By workspace and severity rank, which the findings list index (workspace_id, status,
  // severity_rank, ...) serves; finding_rows has no index on tenant_id.
  const ranks = severities.map((s) => 5 - SEVERITIES.indexOf(s));
  await sql`
    UPDATE finding_rows f
    SET due_at = f.opened_at + make_interval(hours => finding_sla_hours(f.tenant_id, f.severity)),
        sla_breached_at = CASE
          WHEN f.opened_at + make_interval(hours => finding_sla_hours(f.tenant_id, f.severity)) <= f.sla_breached_at THEN f.sla_breached_at
        END
    WHERE f.workspace_id IN (SELECT w.id FROM workspaces w WHERE ${tenantIs(tenantId, 'w')})
      AND f.status = 'open' AND f.severity_rank = ANY(${ranks}::smallint[])`.execute(trx);
}
