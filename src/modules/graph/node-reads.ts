import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import type { NodeSource } from './tables.js';
import './tables.js';

/*
 * Small reads of the graph for other modules (issue 26: a module reads another module's tables only
 * through that module's functions). Each takes the caller's connection or transaction.
 */

/** Whether the workspace has the node. */
export async function nodeExists(db: Kysely<Database>, scope: Scope, id: string): Promise<boolean> {
  const node = await db.selectFrom('nodes').select('id').where(inTenant(scope.tenantId)).where(inWorkspace(scope)).where('id', '=', id).executeTakeFirst();
  return node !== undefined;
}

/** How many nodes the workspace has. */
export async function countNodes(db: Kysely<Database>, scope: Scope): Promise<number> {
  const row = await db
    .selectFrom('nodes')
    .select((eb) => eb.fn.countAll<number>().as('c'))
    .where(inWorkspace(scope))
    .executeTakeFirstOrThrow();
  return Number(row.c);
}

/** A node's id, name, type and properties (undefined: not a node of the workspace). */
export function nodeProperties(db: Kysely<Database>, scope: Scope, id: string) {
  return db.selectFrom('nodes').select(['id', 'name', 'type', 'properties']).where(inWorkspace(scope)).where('id', '=', id).executeTakeFirst();
}

/** How many nodes of the given types the workspace holds (none for no types). */
export async function countNodesOfTypes(db: Kysely<Database>, scope: Scope, types: string[]): Promise<number> {
  if (types.length === 0) return 0;
  const row = await db
    .selectFrom('nodes')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where(inWorkspace(scope))
    .where('type', '=', sql<string>`ANY(${types}::text[])`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One top-level key of a node's properties (null: no such node or key). */
export async function nodeProperty(db: Kysely<Database>, scope: Scope, id: string, key: string): Promise<unknown> {
  const row = await db
    .selectFrom('nodes')
    .select(sql<unknown>`properties -> ${key}`.as('value'))
    .where(inWorkspace(scope))
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.value ?? null;
}

/*
 * Nodes matching a predicate over `nodes AS n` (an application's or asset group's filter,
 * applications/filter/sql.ts), filtered on tenant and workspace unless said otherwise.
 */

/** The scope's nodes the predicate matches, as `n`, for the reads below to select from. */
function scopedNodesMatching(db: Kysely<Database>, scope: Scope, predicate: RawBuilder<boolean>) {
  return db.selectFrom('nodes as n').where(inWorkspace(scope, 'n')).where(inTenant(scope.tenantId, 'n')).where(predicate);
}

/** Every id of the scope's nodes the predicate matches, in id order. */
export async function nodeIdsMatching(db: Kysely<Database>, scope: Scope, predicate: RawBuilder<boolean>): Promise<string[]> {
  const rows = await scopedNodesMatching(db, scope, predicate).select('n.id').orderBy('n.id').execute();
  return rows.map((r) => r.id);
}

/** One page (by id) of the scope's nodes the predicate matches, and how many it matches in all. */
export async function nodePageMatching(db: Kysely<Database>, scope: Scope, predicate: RawBuilder<boolean>, limit: number, offset: number) {
  const matching = scopedNodesMatching(db, scope, predicate);
  const [rows, count] = await Promise.all([
    matching.select(['n.id', 'n.name', 'n.type', 'n.region', 'n.account_id']).orderBy('n.id').limit(limit).offset(offset).execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows, total: Number(count.n) };
}

/** How many of the workspace's nodes the predicate matches (filtered on the workspace alone). */
export async function countNodesMatching(db: Kysely<Database>, scope: Scope, predicate: RawBuilder<boolean>): Promise<number> {
  const row = await db
    .selectFrom('nodes as n')
    .select((eb) => eb.fn.countAll<number>().as('c'))
    .where(inWorkspace(scope, 'n'))
    .where(predicate)
    .executeTakeFirstOrThrow();
  return Number(row.c);
}

/** The name of a node with this native id whose type matches the LIKE pattern (e.g. `%.vpc`), if any. */
export async function nodeNameByNativeId(db: Kysely<Database>, scope: Scope, nativeId: string, typePattern: string): Promise<string | null> {
  const row = await db
    .selectFrom('nodes')
    .select('name')
    .where(inWorkspace(scope))
    .where(inTenant(scope.tenantId))
    .where('native_id', '=', nativeId)
    .where('type', 'like', typePattern)
    .executeTakeFirst();
  return row?.name ?? null;
}

/** The graph's own Internet nodes (type `*.internet.*`). */
export async function internetNodeIds(db: Kysely<Database>, scope: Scope): Promise<string[]> {
  const rows = await db.selectFrom('nodes').select('id').where(inWorkspace(scope)).where(inTenant(scope.tenantId)).where('type', 'like', '%.internet.%').execute();
  return rows.map((r) => r.id);
}

/** The first node (by id) of a provider with this native id, other than `exceptId` (a host's cloud instance). */
export async function nodeIdByNativeId(db: Kysely<Database>, scope: Scope, provider: string, nativeId: string, exceptId: string): Promise<string | null> {
  const row = await db
    .selectFrom('nodes')
    .select('id')
    .where(inWorkspace(scope))
    .where('native_id', '=', nativeId)
    .where('type', 'like', `${provider.replace(/[%_\\]/g, '\\$&')}.%`)
    .where('id', '<>', exceptId)
    .orderBy('id')
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * What an importer needs to know of nodes it is about to write, by id (absent: not a node of the
 * workspace): the digest of their content (migration 0031), to tell which ones a write changed, and
 * their source, which a write from another source should not erase (a Terraform source makes patches possible).
 */
export async function nodeStates(db: Kysely<Database>, scope: Scope, ids: string[]): Promise<Map<string, { content_hash: string; source: NodeSource | null }>> {
  const unique = [...new Set(ids)];
  const out = new Map<string, { content_hash: string; source: NodeSource | null }>();
  for (let i = 0; i < unique.length; i += 5000) {
    const rows = await db
      .selectFrom('nodes')
      .select(['id', 'content_hash', 'source'])
      .where(inTenant(scope.tenantId))
      .where(inWorkspace(scope))
      .where('id', '=', (eb) => eb.fn.any(eb.val(unique.slice(i, i + 5000))))
      .execute();
    for (const row of rows) out.set(row.id, { content_hash: row.content_hash, source: row.source as NodeSource | null });
  }
  return out;
}

export interface NodeRef {
  id: string;
  type: string;
  name: string;
  region: string;
  account_id: string | null;
}

/**
 * The workspace's nodes an outside tool's resource references name: by ARN (`properties.arn`),
 * native id or node id, keyed by the reference that found them (an ARN match wins over a native id).
 */
export async function nodesByReference(db: Kysely<Database>, scope: Scope, refs: string[]): Promise<Map<string, NodeRef>> {
  const found = new Map<string, NodeRef>();
  if (refs.length === 0) return found;
  const rows = await db
    .selectFrom('nodes')
    .select(['id', 'type', 'name', 'region', 'account_id', 'native_id', sql<string | null>`properties->>'arn'`.as('arn')])
    .where(inTenant(scope.tenantId))
    .where(inWorkspace(scope))
    .where((eb) =>
      eb.or([
        eb(sql`properties->>'arn'`, '=', sql<string>`ANY(${refs}::text[])`),
        eb('native_id', '=', sql<string>`ANY(${refs}::text[])`),
        eb('id', '=', sql<string>`ANY(${refs}::text[])`),
      ]),
    )
    .orderBy('id')
    .execute();
  const wanted = new Set(refs);
  // Weakest match first, so a stronger one for the same reference overwrites it.
  for (const key of ['native_id', 'id', 'arn'] as const) {
    for (const row of rows) {
      const ref = row[key];
      if (ref !== null && wanted.has(ref) && (key !== 'native_id' || !found.has(ref))) {
        found.set(ref, { id: row.id, type: row.type, name: row.name, region: row.region, account_id: row.account_id });
      }
    }
  }
  return found;
}
