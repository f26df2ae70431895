import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, type Scope } from '../../../platform/db/scope.js';
import type { Clock } from '../../../platform/clock.js';
import { emitEvents } from '../../../platform/events/outbox.js';
import { findingResolved } from './finding-events.js';
import '../tables.js';

/** What one scanner import decides: the findings of its source in one account and region, for the checks it ran. */
export interface ImportedScope {
  source: string;
  account: string;
  region: string;
  checks: string[];
}

/**
 * Resolves the open findings of an imported scope that the import did not report again (`kept`: the
 * ids it reported failing, or could not decide), `batch` at a time, each batch in its own transaction
 * with its finding.resolved events. Our own rules' findings (source controlgraph) are never touched.
 * Returns how many were resolved.
 */
export async function resolveUnreported(
  db: Kysely<Database>,
  clock: Clock,
  scope: Scope,
  now: Date,
  imported: ImportedScope,
  kept: ReadonlySet<string>,
  batch = 500,
): Promise<number> {
  const open = await db
    .selectFrom('finding_rows')
    .select(['id', 'rule_id', 'resource_id'])
    .where(inWorkspace(scope))
    .where('status', '=', 'open')
    .where('source', '=', imported.source)
    .where('source', '<>', 'controlgraph')
    .where('account_id', '=', imported.account)
    .where('region', '=', imported.region)
    .where('source_check_id', '=', sql<string>`ANY(${imported.checks}::text[])`)
    .execute();
  const gone = open.filter((f) => !kept.has(f.id));
  for (let i = 0; i < gone.length; i += batch) {
    const chunk = gone.slice(i, i + batch);
    await db.transaction().execute(async (trx) => {
      await trx
        .updateTable('finding_rows')
        .set({ status: 'resolved', resolved_at: now, resolved_by: 'import', updated_at: now })
        .where(inWorkspace(scope))
        .where('status', '=', 'open')
        .where('id', '=', sql<string>`ANY(${chunk.map((f) => f.id)}::text[])`)
        .execute();
      await emitEvents(
        trx,
        clock,
        chunk.map((f) => findingResolved(scope, f, now, 'import')),
      );
    });
  }
  return gone.length;
}
