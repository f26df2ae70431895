import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { isUniqueViolation } from '../../platform/db/postgres.js';
import { conflict } from '../../platform/http/errors.js';
import './tables.js';

/**
 * Applications, asset groups and business services are all named, workspace-scoped things a user
 * creates; these rules are kept in one place so the three answer alike.
 */
type NamedTable = 'applications' | 'asset_groups' | 'business_services';

/** Who created the row, as stored in `created_by`. */
export function creatorOf(context: RequestContext): string {
  return `${context.actor.type}:${context.actor.id}`;
}

/** The row with this id in the scope; another workspace's row reads as missing. */
export async function rowInScope<T extends NamedTable>(db: Kysely<Database>, table: T, scope: Scope, id: string): Promise<Selectable<Database[T]> | undefined> {
  // Kysely cannot type a query over a table picked by a type parameter; the three tables share these columns.
  const row: unknown = await (db as unknown as Kysely<any>)
    .selectFrom(table)
    .selectAll()
    .where(inWorkspace(scope))
    .where(inTenant(scope.tenantId))
    .where('id', '=', id)
    .executeTakeFirst();
  return row as Selectable<Database[T]> | undefined;
}

/** A `.catch` handler: the workspace-unique name taken becomes a 409 ("an asset group named … already exists"). */
export function duplicateName(thing: string, name: string) {
  return (error: unknown): never => {
    if (isUniqueViolation(error)) throw conflict(`${thing} named "${name}" already exists`);
    throw error;
  };
}
