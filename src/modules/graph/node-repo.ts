import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inScope, inWorkspace, type Scope } from '../../platform/db/scope.js';
import { offsetOf, type PageRequest } from '../../platform/http/pagination.js';
import type { NodeSource } from './tables.js';
import './tables.js';

export interface NodeRecord {
  id: string;
  provider: string;
  region: string;
  type: string;
  native_id: string;
  name: string;
  account_id: string | null;
  properties: Record<string, unknown>;
  tags: Record<string, unknown>;
  source: NodeSource | null;
}

/** What a batch upsert returns per node: everything but the (large) properties, tags and source. */
export const nodeSummaryColumns = ['id', 'provider', 'region', 'type', 'native_id', 'name', 'account_id', 'workspace_id', 'created_at', 'updated_at'] as const;

export const nodeColumns = [
  'id',
  'provider',
  'region',
  'type',
  'native_id',
  'name',
  'account_id',
  'properties',
  'tags',
  'source',
  'workspace_id',
  'created_at',
  'updated_at',
] as const;

// 1,000 rows x 14 columns stays far below the 65,535 bind parameters of a statement.
const CHUNK = 1000;

/** The columns a node's writer sets: a stored row equal in all of them is the same node. */
const WRITTEN = ['provider', 'region', 'type', 'native_id', 'name', 'account_id', 'properties', 'tags', 'source'] as const;

/**
 * Upserts nodes with a few multi-row statements (not one per node). Returns the stored rows and how
 * many were new (`xmax = 0` marks a row this statement inserted rather than updated).
 *
 * `skipUnchanged`: a stored node equal in every written column is left as it is (no new row version,
 * updated_at kept) and is not returned. A scanner import re-stating 100,000 unchanged nodes otherwise
 * rewrote each of them, and took three times as long as the first import.
 */
export async function upsertNodes(db: Kysely<Database>, scope: Scope, nodes: NodeRecord[], now: Date, full = true, options: { skipUnchanged?: boolean } = {}) {
  const items: Array<Record<string, unknown>> = [];
  let created = 0;
  for (let i = 0; i < nodes.length; i += CHUNK) {
    const chunk = nodes.slice(i, i + CHUNK);
    const rows = await db
      .insertInto('nodes')
      .values(
        chunk.map((n) => ({
          tenant_id: scope.tenantId,
          workspace_id: scope.workspaceId,
          id: n.id,
          provider: n.provider,
          region: n.region,
          type: n.type,
          native_id: n.native_id,
          name: n.name,
          account_id: n.account_id,
          properties: json(n.properties),
          tags: json(n.tags),
          source: n.source === null ? null : json(n.source),
          created_at: now,
          updated_at: now,
        })),
      )
      .onConflict((oc) => {
        const update = oc.columns(['workspace_id', 'id']).doUpdateSet((eb) => ({
          provider: eb.ref('excluded.provider'),
          region: eb.ref('excluded.region'),
          type: eb.ref('excluded.type'),
          native_id: eb.ref('excluded.native_id'),
          name: eb.ref('excluded.name'),
          account_id: eb.ref('excluded.account_id'),
          properties: eb.ref('excluded.properties'),
          tags: eb.ref('excluded.tags'),
          source: eb.ref('excluded.source'),
          updated_at: eb.ref('excluded.updated_at'),
        }));
        if (!options.skipUnchanged) return update;
        return update.where(sql<boolean>`(${sql.join(WRITTEN.map((c) => sql.ref(`nodes.${c}`)))}) IS DISTINCT FROM (${sql.join(WRITTEN.map((c) => sql.ref(`excluded.${c}`)))})`);
      })
      .returning([...(full ? nodeColumns : nodeSummaryColumns), sql<boolean>`(xmax = 0)`.as('inserted')])
      .execute();
    for (const { inserted, ...row } of rows) {
      if (inserted) created++;
      items.push(row);
    }
  }
  return { items, created, updated: items.length - created };
}

export interface NodeFilter {
  types?: string[];
  region?: string;
  accountId?: string;
  search?: string;
}

export async function listNodes(db: Kysely<Database>, scope: Scope, filter: NodeFilter, sort: { column: string; desc: boolean }, page: PageRequest) {
  let query = db.selectFrom('nodes').where(inScope(scope));
  if (filter.types?.length) query = query.where('type', 'in', filter.types);
  if (filter.region) query = query.where('region', '=', filter.region);
  if (filter.accountId) query = query.where('account_id', '=', filter.accountId);
  if (filter.search) {
    const pattern = `%${filter.search.replace(/[%_\\]/g, '\\$&')}%`;
    query = query.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('id', 'ilike', pattern), eb('native_id', 'ilike', pattern)]));
  }
  const [items, count] = await Promise.all([
    query
      .select(nodeColumns)
      .orderBy(sort.column as 'id', sort.desc ? 'desc' : 'asc')
      .orderBy('id', 'asc')
      .limit(page.perPage)
      .offset(offsetOf(page))
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(count.n) };
}

export function getNode(db: Kysely<Database>, scope: Scope, id: string) {
  return db.selectFrom('nodes').select(nodeColumns).where(inScope(scope)).where('id', '=', id).executeTakeFirst();
}

/** Deletes the node; its edges go with it (foreign keys cascade). */
export async function deleteNode(db: Kysely<Database>, scope: Scope, id: string): Promise<boolean> {
  const result = await db.deleteFrom('nodes').where(inScope(scope)).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The ids among `ids` that are not nodes of the scope. */
export async function missingNodes(db: Kysely<Database>, scope: Scope, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const found = new Set<string>();
  for (let i = 0; i < unique.length; i += 5000) {
    const rows = await db
      .selectFrom('nodes')
      .select('id')
      .where(inWorkspace(scope))
      .where('id', '=', (eb) => eb.fn.any(eb.val(unique.slice(i, i + 5000))))
      .execute();
    for (const row of rows) found.add(row.id);
  }
  return unique.filter((id) => !found.has(id));
}

/**
 * Writes one node unless the stored one is equal in name, account, properties and source (then no
 * new row version, updated_at kept). Its tags are those of a new node only ({}): a writer that has
 * none (a host agent) leaves the ones users set. Returns what happened to the node.
 */
export async function writeNodeUnlessUnchanged(
  db: Kysely<Database>,
  scope: Scope,
  now: Date,
  node: Omit<NodeRecord, 'tags' | 'source'> & { source: NodeSource },
): Promise<'created' | 'changed' | 'unchanged'> {
  const result = await sql<{ inserted: boolean }>`
    INSERT INTO nodes (tenant_id, workspace_id, id, provider, region, type, native_id, name, account_id, properties, tags, source, created_at, updated_at)
    VALUES (${scope.tenantId}, ${scope.workspaceId}, ${node.id}, ${node.provider}, ${node.region}, ${node.type}, ${node.native_id}, ${node.name},
      ${node.account_id}, ${json(node.properties)}::jsonb, '{}'::jsonb, ${json(node.source)}::jsonb, ${now}, ${now})
    ON CONFLICT (workspace_id, id) DO UPDATE SET
      name = excluded.name, account_id = excluded.account_id, properties = excluded.properties, source = excluded.source, updated_at = excluded.updated_at
    WHERE nodes.name IS DISTINCT FROM excluded.name OR nodes.account_id IS DISTINCT FROM excluded.account_id
      OR nodes.properties IS DISTINCT FROM excluded.properties OR nodes.source IS DISTINCT FROM excluded.source
    RETURNING (xmax = 0) AS inserted`.execute(db);
  const row = result.rows[0];
  if (!row) return 'unchanged';
  return row.inserted ? 'created' : 'changed';
}
