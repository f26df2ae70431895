import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import { isoDate } from './model.js';
import './tables.js';

/**
 * The findings the workspace's POA&M plans to have fixed by `at`: those of items not closed whose
 * scheduled completion day (UTC) is before the day of `at` (an item is due by the end of its day,
 * as isOverdue reads it). A forecast counts them as resolved. Items without a finding change no
 * finding, so they are not listed.
 */
export async function findingsScheduledToClose(db: Kysely<Database>, scope: Scope, at: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('poam_items')
    .select('finding_id')
    .where(inTenant(scope.tenantId))
    .where(inWorkspace(scope))
    .where('finding_id', 'is not', null)
    .where('status', '<>', 'closed')
    .where('scheduled_completion', '<', isoDate(at))
    .execute();
  return rows.map((r) => r.finding_id!);
}
