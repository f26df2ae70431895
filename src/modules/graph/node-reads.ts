import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Scope } from '../../platform/db/scope.js';
import './tables.js';

/*
 * Small reads of the graph for other modules (issue 26: a module reads another module's tables only
 * through that module's functions). Each takes the caller's connection or transaction.
 */

/** Whether the workspace has the node. */
export async function nodeExists(db: Kysely<Database>, scope: Scope, id: string): Promise<boolean> {
  const node = await db.selectFrom('nodes').select('id').where('tenant_id', '=', scope.tenantId).where('workspace_id', '=', scope.workspaceId).where('id', '=', id).executeTakeFirst();
  return node !== undefined;
}

/** How many nodes the workspace has. */
export async function countNodes(db: Kysely<Database>, scope: Scope): Promise<number> {
  const row = await db.selectFrom('nodes').select((eb) => eb.fn.countAll<number>().as('c')).where('workspace_id', '=', scope.workspaceId).executeTakeFirstOrThrow();
  return Number(row.c);
}

/** The graph's own Internet nodes (type `*.internet.*`). */
export async function internetNodeIds(db: Kysely<Database>, scope: Scope): Promise<string[]> {
  const rows = await db.selectFrom('nodes').select('id').where('workspace_id', '=', scope.workspaceId).where('tenant_id', '=', scope.tenantId).where('type', 'like', '%.internet.%').execute();
  return rows.map((r) => r.id);
}

/** The first node (by id) of a provider with this native id, other than `exceptId` (a host's cloud instance). */
export async function nodeIdByNativeId(db: Kysely<Database>, scope: Scope, provider: string, nativeId: string, exceptId: string): Promise<string | null> {
  const row = await db
    .selectFrom('nodes')
    .select('id')
    .where('workspace_id', '=', scope.workspaceId)
    .where('native_id', '=', nativeId)
    .where('type', 'like', `${provider.replace(/[%_\\]/g, '\\$&')}.%`)
    .where('id', '<>', exceptId)
    .orderBy('id')
    .executeTakeFirst();
  return row?.id ?? null;
}
