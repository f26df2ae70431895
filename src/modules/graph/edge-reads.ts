import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, workspaceIs, type Scope } from '../../platform/db/scope.js';
import './tables.js';

/*
 * Reads of the graph's edges for other modules (issue 26: a module reads another module's tables
 * only through that module's functions). Each takes the caller's connection or transaction.
 */

/** The nodes one edge away from any of `nodeIds`. */
export async function neighbourIds(db: Kysely<Database>, scope: Scope, nodeIds: string[]): Promise<string[]> {
  if (nodeIds.length === 0) return [];
  const ids = [...new Set(nodeIds)];
  const rows = await sql<{ id: string }>`
    SELECT e.target AS id FROM edges e WHERE ${workspaceIs(scope, 'e')} AND e.source = ANY(${ids}::text[])
    UNION SELECT e.source FROM edges e WHERE ${workspaceIs(scope, 'e')} AND e.target = ANY(${ids}::text[])`.execute(db);
  return rows.rows.map((r) => r.id);
}

/** A neighbour of `resource_id` over an edge of type `edge`: the other node's id, native id and type. */
export interface NeighbourRow {
  resource_id: string;
  edge: string;
  id: string;
  native_id: string;
  type: string;
}

/** The neighbours of `nodeIds` over edges of `edgeTypes`, in either direction (one row per edge end). */
export async function neighboursOver(db: Kysely<Database>, scope: Scope, edgeTypes: string[], nodeIds: string[]): Promise<NeighbourRow[]> {
  if (edgeTypes.length === 0 || nodeIds.length === 0) return [];
  const rows = await sql<NeighbourRow>`
    SELECT e.source AS resource_id, e.type AS edge, n.id, n.native_id, n.type
    FROM edges e JOIN nodes n ON n.workspace_id = e.workspace_id AND n.id = e.target
    WHERE ${workspaceIs(scope, 'e')} AND e.type = ANY(${edgeTypes}::text[]) AND e.source = ANY(${nodeIds}::text[])
    UNION ALL
    SELECT e.target AS resource_id, e.type AS edge, n.id, n.native_id, n.type
    FROM edges e JOIN nodes n ON n.workspace_id = e.workspace_id AND n.id = e.source
    WHERE ${workspaceIs(scope, 'e')} AND e.type = ANY(${edgeTypes}::text[]) AND e.target = ANY(${nodeIds}::text[])`.execute(db);
  return rows.rows;
}

/** The edges leaving any of `sourceIds` (source and target only). */
export async function edgesFrom(db: Kysely<Database>, scope: Scope, sourceIds: string[]): Promise<Array<{ source: string; target: string }>> {
  const rows = await sql<{ source: string; target: string }>`
    SELECT e.source, e.target FROM edges e
    WHERE ${workspaceIs(scope, 'e')} AND e.source = ANY(${sourceIds}::text[])`.execute(db);
  return rows.rows;
}

/** Which of `types` the workspace has an edge of: one query, one index probe per type. */
export async function edgeTypesPresent(db: Kysely<Database>, scope: Scope, types: string[]): Promise<Set<string>> {
  if (types.length === 0) return new Set();
  const rows = await sql<{ type: string }>`SELECT t.type FROM unnest(${types}::text[]) AS t(type)
    WHERE EXISTS (SELECT 1 FROM edges e WHERE ${workspaceIs(scope, 'e')} AND e.type = t.type)`.execute(db);
  return new Set(rows.rows.map((r) => r.type));
}

/** An edge as a walk reads it; `out`: found from its source (else from its target). */
export interface EdgeEnd {
  id: string;
  source: string;
  target: string;
  type: string;
  out: boolean;
}

/**
 * The edges of `bySource` types leaving, and of `byTarget` types entering, the nodes `ids`, at most
 * `limit` of them, in one statement through the (workspace, source, …) and (workspace, target)
 * indexes. One index probe per node (LATERAL ... OFFSET 0 keeps the subquery from being flattened
 * into a join): without it the planner, lacking statistics (PGlite never runs ANALYZE), reads every
 * edge of the traversable types through the (workspace_id, type) index at each level of a walk.
 */
export async function edgesAt(db: Kysely<Database>, scope: Scope, ids: string[], bySource: string[], byTarget: string[], limit: number): Promise<EdgeEnd[]> {
  const from = (end: 'source' | 'target', types: string[]) =>
    sql`SELECT e.id, e.source, e.target, e.type, ${sql.lit(end === 'source')} AS out FROM unnest(${ids}::text[]) AS f(id)
        CROSS JOIN LATERAL (SELECT x.id, x.source, x.target, x.type FROM edges x
          WHERE ${workspaceIs(scope, 'x')} AND ${sql.ref(`x.${end}`)} = f.id AND x.type = ANY(${types}::text[]) OFFSET 0) e`;
  const parts = [...(bySource.length ? [from('source', bySource)] : []), ...(byTarget.length ? [from('target', byTarget)] : [])];
  if (parts.length === 0) return [];
  const rows = await sql<EdgeEnd>`
      ${sql.join(parts, sql` UNION ALL `)} LIMIT ${limit}`.execute(db);
  return rows.rows;
}

/** One page of the scope's edges (source, target, type) in that order, after `cursor` (null: from the start). */
export async function edgePage(db: Kysely<Database>, scope: Scope, cursor: { source: string; target: string; type: string } | null, limit: number) {
  return db
    .selectFrom('edges')
    .select(['source', 'target', 'type'])
    .where(inTenant(scope.tenantId))
    .where(inWorkspace(scope))
    .$if(cursor !== null, (q) => q.where(sql<boolean>`(source, target, type) > (${cursor!.source}, ${cursor!.target}, ${cursor!.type})`))
    .orderBy('source')
    .orderBy('target')
    .orderBy('type')
    .limit(limit)
    .execute();
}
