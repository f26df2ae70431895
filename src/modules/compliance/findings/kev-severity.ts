import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import '../tables.js';

/** A finding whose severity a KEV reconciliation changed, with the CVEs the change is about. */
export interface KevSeverityChange {
  tenant_id: string;
  workspace_id: string;
  id: string;
  rule_id: string;
  resource_id: string;
  previous_severity: string;
  severity: string;
  cve_ids: string[];
}

/**
 * Brings the severity of every open finding, in every workspace, in line with the KEV catalog (the
 * vulndb module's, given as a query of one row and one column `ids`, the catalog's CVE ids as an
 * array): a finding naming a catalog CVE becomes CRITICAL (`cve_ids` of the change: those catalog
 * CVEs); one raised above its `base_severity` that names none any more gets its base severity back.
 * In the caller's transaction; the caller emits the events.
 */
export async function reconcileKnownExploited(
  trx: Kysely<Database>,
  now: Date,
  kevIds: RawBuilder<unknown>,
): Promise<{ escalated: KevSeverityChange[]; restored: KevSeverityChange[] }> {
  // The catalog as one array: `&&` against it uses the GIN index on findings.cve_ids, which holds only
  // findings that name a CVE (hence the cardinality predicate, the index's own).
  const escalated = await sql<KevSeverityChange>`
    WITH kev AS (${kevIds}),
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
  const restored = await sql<KevSeverityChange>`
    WITH kev AS (${kevIds}),
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
  return { escalated: escalated.rows, restored: restored.rows };
}
