import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { emitEvents, type NewEvent } from '../../platform/events/outbox.js';
import { reconcileKnownExploited, type KevSeverityChange } from '../compliance/index.js';
import './tables.js';

/**
 * KEV escalation. The spec: "A finding that matches a known-exploited CVE is escalated to CRITICAL."
 *
 * - `createKevLookup(db).isKnownExploited(cveIds)` answers, for the compliance engine and the host
 *   agent, which of the given CVEs are in the CISA KEV catalog (one indexed query, no cache: the
 *   answer follows every import at once).
 * - `reconcileKevSeverities(trx, clock)` runs in the transaction of every KEV import: each open finding
 *   whose `cve_ids` include a catalog CVE gets severity CRITICAL; each open finding that was raised
 *   above its `base_severity` and no longer references a catalog CVE (the CVE left the catalog) gets
 *   its base severity back. Every change emits `finding.severity_changed` in the same transaction.
 *
 * The findings belong to the compliance module: it changes their severities (reconcileKnownExploited)
 * against the catalog this module hands it as a query.
 */
export interface KevLookup {
  /** The subset of `cveIds` that are in the KEV catalog (ids compared upper-case). */
  isKnownExploited(cveIds: readonly string[]): Promise<Set<string>>;
}

export function createKevLookup(db: Kysely<Database>): KevLookup {
  return {
    async isKnownExploited(cveIds) {
      const ids = [...new Set(cveIds.map((id) => id.trim().toUpperCase()).filter(Boolean))];
      if (ids.length === 0) return new Set();
      const rows = await db
        .selectFrom('vulndb_kev')
        .select('cve_id')
        .where('cve_id', '=', sql<string>`ANY(${ids}::text[])`)
        .execute();
      return new Set(rows.map((r) => r.cve_id));
    },
  };
}

export const KNOWN_EXPLOITED = 'known_exploited';
export const NO_LONGER_KNOWN_EXPLOITED = 'no_longer_known_exploited';

export interface ReconcileResult {
  escalated: number;
  restored: number;
}

function event(row: KevSeverityChange, reason: string): NewEvent {
  return {
    tenantId: row.tenant_id,
    workspaceId: row.workspace_id,
    type: 'finding.severity_changed',
    data: {
      finding_id: row.id,
      rule_id: row.rule_id,
      resource_id: row.resource_id,
      previous_severity: row.previous_severity,
      severity: row.severity,
      reason,
      cve_ids: row.cve_ids,
    },
  };
}

/** Brings the severity of every open finding in line with the KEV catalog as it is in `trx`. */
export async function reconcileKevSeverities(trx: Kysely<Database>, clock: Clock): Promise<ReconcileResult> {
  const catalog = sql`SELECT coalesce(array_agg(cve_id), '{}') AS ids FROM vulndb_kev`;
  const { escalated, restored } = await reconcileKnownExploited(trx, clock.now(), catalog);
  await emitEvents(trx, clock, [...escalated.map((row) => event(row, KNOWN_EXPLOITED)), ...restored.map((row) => event(row, NO_LONGER_KNOWN_EXPLOITED))]);
  return { escalated: escalated.length, restored: restored.length };
}
