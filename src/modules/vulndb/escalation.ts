import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { emitEvents, type NewEvent } from '../../platform/events/outbox.js';
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
 * The findings table belongs to the compliance module; it is addressed with plain SQL here so that
 * this module does not declare (and constrain) its Kysely type.
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

interface ChangedFinding {
  tenant_id: string;
  workspace_id: string;
  id: string;
  rule_id: string;
  resource_id: string;
  previous_severity: string;
  severity: string;
  cve_ids: string[];
}

export interface ReconcileResult {
  escalated: number;
  restored: number;
}

function event(row: ChangedFinding, reason: string): NewEvent {
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
  const now = clock.now();
  // The catalog as one array: `&&` against it uses the GIN index on findings.cve_ids, which holds only
  // findings that name a CVE (hence the cardinality predicate, the index's own).
  const escalated = await sql<ChangedFinding>`
    WITH kev AS (SELECT coalesce(array_agg(cve_id), '{}') AS ids FROM vulndb_kev),
    target AS (
      SELECT f.workspace_id, f.id, f.severity AS previous_severity,
        ARRAY(SELECT c FROM unnest(f.cve_ids) AS c WHERE c = ANY(kev.ids) ORDER BY c) AS kev_ids
      FROM finding_rows f, kev
      WHERE f.status = 'open' AND f.severity <> 'CRITICAL' AND cardinality(f.cve_ids) > 0 AND f.cve_ids && kev.ids
      FOR UPDATE OF f
    )
    UPDATE finding_rows f SET severity = 'CRITICAL', updated_at = ${now}
    FROM target t
    WHERE f.workspace_id = t.workspace_id AND f.id = t.id
    RETURNING f.tenant_id, f.workspace_id, f.id, f.rule_id, f.resource_id, t.previous_severity, f.severity, t.kev_ids AS cve_ids`.execute(trx);
  const restored = await sql<ChangedFinding>`
    WITH kev AS (SELECT coalesce(array_agg(cve_id), '{}') AS ids FROM vulndb_kev),
    target AS (
      SELECT f.workspace_id, f.id, f.severity AS previous_severity
      FROM finding_rows f, kev
      WHERE f.status = 'open' AND f.severity <> f.base_severity AND f.severity = 'CRITICAL'
        AND cardinality(f.cve_ids) > 0 AND NOT (f.cve_ids && kev.ids)
      FOR UPDATE OF f
    )
    UPDATE finding_rows f SET severity = f.base_severity, updated_at = ${now}
    FROM target t
    WHERE f.workspace_id = t.workspace_id AND f.id = t.id
    RETURNING f.tenant_id, f.workspace_id, f.id, f.rule_id, f.resource_id, t.previous_severity, f.severity, f.cve_ids`.execute(trx);
  await emitEvents(trx, clock, [...escalated.rows.map((row) => event(row, KNOWN_EXPLOITED)), ...restored.rows.map((row) => event(row, NO_LONGER_KNOWN_EXPLOITED))]);
  return { escalated: escalated.rows.length, restored: restored.rows.length };
}
