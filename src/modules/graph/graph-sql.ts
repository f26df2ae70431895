import { sql, type RawBuilder } from 'kysely';
import { workspaceIs, tenantIs, type Scope } from '../../platform/db/scope.js';
import './tables.js';

/*
 * The graph as pieces of another module's SQL (issue 26: a module reads another module's tables only
 * through that module's functions), for the queries that join nodes or edges into their own tables in
 * one statement (audit pages, exposure, application filters). Each relation is a plain subquery
 * (`FROM ${nodesInWorkspace(scope)} n`): PostgreSQL pulls it up into the caller's query, so the plan
 * is the one of naming the table there. It has every column of its table; a caller grouping by a
 * node's id cannot rely on the primary key for the other columns, though (a subquery has none).
 */

/** The workspace's nodes (filtered on the workspace alone, see inWorkspace). */
export function nodesInWorkspace(scope: Scope): RawBuilder<unknown> {
  return sql`(SELECT * FROM nodes g WHERE ${workspaceIs(scope, 'g')})`;
}

/** The scope's nodes, filtered on tenant and workspace. */
export function nodesInScope(scope: Scope): RawBuilder<unknown> {
  return sql`(SELECT * FROM nodes g WHERE ${workspaceIs(scope, 'g')} AND ${tenantIs(scope.tenantId, 'g')})`;
}

/** The workspace's Internet nodes (type `*.internet.*`, as internetNodeIds). */
export function internetNodesInWorkspace(scope: Scope): RawBuilder<unknown> {
  return sql`(SELECT * FROM nodes g WHERE ${workspaceIs(scope, 'g')} AND g.type LIKE '%.internet.%')`;
}

/** The workspace's edges. */
export function edgesInWorkspace(scope: Scope): RawBuilder<unknown> {
  return sql`(SELECT * FROM edges g WHERE ${workspaceIs(scope, 'g')})`;
}

/**
 * The nodes of the scope among `ids`, as a subquery (columns of `nodes`). A few ids: one primary-key
 * probe each, because a plain `id = ANY(...)` next to the tenant filter lets a planner without
 * statistics (PGlite never runs ANALYZE) AND the tenant and region indexes over every node of the
 * tenant. Many ids: the plain form, which reads about as much then and lets PostgreSQL hash them.
 */
const PROBE_LIMIT = 2000;

export function nodesAmong(scope: Scope, ids: readonly string[]): RawBuilder<unknown> {
  if (ids.length > PROBE_LIMIT) {
    return sql`(SELECT n.* FROM nodes n WHERE ${workspaceIs(scope, 'n')} AND ${tenantIs(scope.tenantId, 'n')} AND n.id = ANY(${ids}::text[]))`;
  }
  return sql`(SELECT x.* FROM unnest(${ids}::text[]) AS wanted(id)
    CROSS JOIN LATERAL (SELECT n.* FROM nodes n WHERE ${workspaceIs(scope, 'n')} AND n.id = wanted.id OFFSET 0) x
    WHERE ${tenantIs(scope.tenantId, 'x')})`;
}

/**
 * Whether the node a row of the caller's query names exists (with that type, when `typeColumn` is
 * given): `EXISTS (...)` over the row's own workspace column, for a statement that covers the rows
 * of a workspace (what a vanished resource leaves).
 */
export function nodeOfRowExists(workspaceColumn: string, idColumn: string, typeColumn?: string): RawBuilder<boolean> {
  // Correlated with the caller's row, not a scope filter: the row's query is scoped itself.
  const type = typeColumn ? sql` AND ${sql.ref(typeColumn)} = n.type` : sql``;
  return sql<boolean>`EXISTS (SELECT 1 FROM nodes n WHERE ${sql.ref(workspaceColumn)} = n.workspace_id AND ${sql.ref(idColumn)} = n.id${type})`;
}

/** Whether the workspace has a node with the id (and type) in the columns of the caller's row. */
export function nodeExistsInWorkspace(scope: Scope, idColumn: string, typeColumn: string): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM nodes n WHERE ${workspaceIs(scope, 'n')} AND n.id = ${sql.ref(idColumn)} AND n.type = ${sql.ref(typeColumn)})`;
}

/**
 * The neighbours of the caller's node `n` over edges of `edgeTypes`, in either direction, as text:
 * edge type and the other node's id, native_id and type, in a fixed order ('' for none). What an
 * audit's input digest of a node covers (compliance/audit/node-pages.ts), matching what the
 * grouping reads (neighboursOver).
 */
export function neighboursOfNodeN(edgeTypes: string[]): RawBuilder<string> {
  return sql<string>`coalesce((
    SELECT jsonb_agg(jsonb_build_array(x.edge, x.id, x.native_id, x.type) ORDER BY x.edge, x.id, x.native_id, x.type)::text
    FROM (
      SELECT e.type AS edge, m.id, m.native_id, m.type
      FROM edges e JOIN nodes m ON m.workspace_id = e.workspace_id AND m.id = e.target
      WHERE e.workspace_id = n.workspace_id AND e.source = n.id AND e.type = ANY(${edgeTypes}::text[])
      UNION ALL
      SELECT e.type, m.id, m.native_id, m.type
      FROM edges e JOIN nodes m ON m.workspace_id = e.workspace_id AND m.id = e.source
      WHERE e.workspace_id = n.workspace_id AND e.target = n.id AND e.type = ANY(${edgeTypes}::text[])
    ) x), '')`;
}
