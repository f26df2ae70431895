import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import './tables.js';

/**
 * The state of the advisory sources package matching depends on (OSV and NVD: the last successful
 * import run and record count of each). Equal states mean the store gives the same answers, so a
 * caller that cached matches under the state (the agents module's host inventories) need not match again.
 */
export async function matchingSourcesState(db: Kysely<Database>): Promise<string> {
  const rows = await db.selectFrom('vulndb_sources').select(['source', 'last_success_run_id', 'record_count']).where('source', 'in', ['osv', 'nvd']).orderBy('source').execute();
  return rows.map((r) => `${r.source}=${r.last_success_run_id ?? '-'}/${r.record_count}`).join(',');
}
