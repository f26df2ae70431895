import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inScope, type Scope } from '../../platform/db/scope.js';
import { offsetOf, type PageRequest } from '../../platform/http/pagination.js';
import './tables.js';

export interface EdgeRecord {
  source: string;
  target: string;
  type: string;
  properties: Record<string, unknown>;
}

export const edgeColumns = ['id', 'source', 'target', 'type', 'properties', 'workspace_id', 'created_at', 'updated_at'] as const;
const CHUNK = 1000;

/** Upserts edges by (source, target, type): the same relation keeps its id. */
export async function upsertEdges(db: Kysely<Database>, scope: Scope, edges: EdgeRecord[], now: Date) {
  const items: Array<Record<string, unknown>> = [];
  let created = 0;
  for (let i = 0; i < edges.length; i += CHUNK) {
    const rows = await db
      .insertInto('edges')
      .values(
        edges.slice(i, i + CHUNK).map((e) => ({
          id: randomUUID(),
          tenant_id: scope.tenantId,
          workspace_id: scope.workspaceId,
          source: e.source,
          target: e.target,
          type: e.type,
          properties: json(e.properties),
          created_at: now,
          updated_at: now,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'source', 'target', 'type']).doUpdateSet((eb) => ({
          properties: eb.ref('excluded.properties'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .returning([...edgeColumns, sql<boolean>`(xmax = 0)`.as('inserted')])
      .execute();
    for (const { inserted, ...row } of rows) {
      if (inserted) created++;
      items.push(row);
    }
  }
  return { items, created, updated: items.length - created };
}

export interface EdgeFilter {
  node?: string;
  source?: string;
  target?: string;
  type?: string;
}

export async function listEdges(db: Kysely<Database>, scope: Scope, filter: EdgeFilter, page: PageRequest) {
  let query = db.selectFrom('edges').where(inScope(scope));
  if (filter.node) query = query.where((eb) => eb.or([eb('source', '=', filter.node!), eb('target', '=', filter.node!)]));
  if (filter.source) query = query.where('source', '=', filter.source);
  if (filter.target) query = query.where('target', '=', filter.target);
  if (filter.type) query = query.where('type', '=', filter.type);
  const [items, count] = await Promise.all([
    query.select(edgeColumns).orderBy('created_at').orderBy('id').limit(page.perPage).offset(offsetOf(page)).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(count.n) };
}

export async function deleteEdge(db: Kysely<Database>, scope: Scope, id: string): Promise<boolean> {
  const result = await db.deleteFrom('edges').where(inScope(scope)).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Adds the edge unless the relation (source, target, type) exists already (its properties are then kept). */
export async function addEdgeUnlessPresent(db: Kysely<Database>, scope: Scope, edge: EdgeRecord, now: Date): Promise<void> {
  await db
    .insertInto('edges')
    .values({
      id: randomUUID(),
      tenant_id: scope.tenantId,
      workspace_id: scope.workspaceId,
      source: edge.source,
      target: edge.target,
      type: edge.type,
      properties: json(edge.properties),
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'source', 'target', 'type']).doNothing())
    .execute();
}
