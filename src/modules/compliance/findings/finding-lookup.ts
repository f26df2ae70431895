import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inTenant, inWorkspace, workspaceIs, type Scope } from '../../../platform/db/scope.js';
import type { FindingsTable } from '../tables.js';

/**
 * Reads of findings by key, for the modules that follow findings (POA&M items, risk acceptances,
 * integrations' alert filters): the findings tables are compliance's, these are the ways in.
 */

export type FindingColumn = keyof FindingsTable;
export type FindingFields<C extends FindingColumn> = Pick<Selectable<FindingsTable>, C>;

/** The scope's findings as `f`, for a caller to select from and filter further (a Kysely query it composes). */
export function scopedFindings(db: Kysely<Database>, scope: Scope) {
  return db.selectFrom('findings as f').where(inTenant(scope.tenantId, 'f')).where(inWorkspace(scope, 'f'));
}

/** A finding's status, or null when the scope holds no finding of that id. */
export async function findingStatus(db: Kysely<Database>, scope: Scope, id: string): Promise<FindingsTable['status'] | null> {
  const row = await scopedFindings(db, scope).select('f.status').where('f.id', '=', id).executeTakeFirst();
  return row?.status ?? null;
}

const ID_CHUNK = 1000;

/** The given columns of the scope's findings among `ids` (absent ids are left out), a thousand ids per query. */
export async function findingsByIds<C extends FindingColumn>(db: Kysely<Database>, scope: Scope, ids: readonly string[], columns: readonly C[]): Promise<Array<FindingFields<C>>> {
  const found: Array<FindingFields<C>> = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    const rows = await db
      .selectFrom('findings')
      .select(columns as unknown as readonly FindingColumn[])
      .where(inTenant(scope.tenantId))
      .where(inWorkspace(scope))
      .where('id', 'in', ids.slice(i, i + ID_CHUNK))
      .execute();
    found.push(...(rows as unknown as Array<FindingFields<C>>));
  }
  return found;
}

/** What alert rules filter on, of findings named by (workspace, id) across workspaces (the event outbox spans them). */
export async function findingAlertFacts(
  db: Kysely<Database>,
  keys: ReadonlyArray<{ workspaceId: string; id: string }>,
): Promise<Array<{ workspace_id: string; id: string; severity: string; framework: string; resource_type: string }>> {
  if (keys.length === 0) return [];
  const found = await sql<{ workspace_id: string; id: string; severity: string; framework: string; resource_type: string }>`
    SELECT f.workspace_id, f.id, f.severity, f.framework, f.resource_type
    FROM unnest(${keys.map((k) => k.workspaceId)}::uuid[], ${keys.map((k) => k.id)}::text[]) AS q(workspace_id, id)
    JOIN findings f ON f.workspace_id = q.workspace_id AND f.id = q.id`.execute(db);
  return found.rows;
}

/**
 * The scope's open findings as a derived table, for raw SQL that joins them to the caller's own
 * tables (`JOIN ${openFindingsTable(scope)} f ON …`): PostgreSQL flattens it into the join.
 */
export function openFindingsTable(scope: Scope) {
  return sql`(SELECT f.* FROM findings f WHERE ${workspaceIs(scope, 'f')} AND f.status = 'open')`;
}
