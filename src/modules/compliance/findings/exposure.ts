import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { workspaceIs, type Scope } from '../../../platform/db/scope.js';
import { activeAt, hasLiveAcceptances } from '../../risk/index.js';
import { builtinRules } from '../rule-catalog.js';
import { edgesInWorkspace, internetNodesInWorkspace } from '../../graph/index.js';

/**
 * Resources reachable from the Internet, found through the graph: a resource with an active finding
 * of an exposure rule (a security group or NACL open to the world, a public database, a public IP),
 * every node one edge away from such a resource (the instances that security group protects), and
 * every node with an edge from an Internet node (type `*.internet.*`).
 */
const exposureRules = () =>
  builtinRules()
    .filter((r) => r.definition?.exposure === 'internet')
    .map((r) => r.id);

export async function exposedResources(db: Kysely<Database>, scope: Scope, now: Date): Promise<Set<string>> {
  const live = await hasLiveAcceptances(db, scope.workspaceId, now);
  const rows = await sql<{ id: string }>`
    WITH open_to_world AS (
      SELECT DISTINCT f.resource_id AS id FROM findings f
      WHERE ${workspaceIs(scope, 'f')} AND f.rule_id = ANY(${exposureRules()}::text[]) AND ${activeAt('f', now, live)}
    ), internet AS (
      SELECT n.id FROM ${internetNodesInWorkspace(scope)} n
    )
    SELECT id FROM open_to_world
    UNION SELECT e.target FROM ${edgesInWorkspace(scope)} e JOIN open_to_world o ON e.source = o.id
    UNION SELECT e.source FROM ${edgesInWorkspace(scope)} e JOIN open_to_world o ON e.target = o.id
    UNION SELECT e.target FROM ${edgesInWorkspace(scope)} e JOIN internet i ON e.source = i.id`.execute(db);
  return new Set(rows.rows.map((r) => r.id));
}

/**
 * Which of `resourceIds` are exposed, by the same three ways as exposedResources, asking only about
 * them (a page of scored findings explains its 50 scores without computing the workspace's exposure).
 */
export async function exposedAmong(db: Kysely<Database>, scope: Scope, now: Date, resourceIds: string[]): Promise<Set<string>> {
  if (resourceIds.length === 0) return new Set();
  const live = await hasLiveAcceptances(db, scope.workspaceId, now);
  const openToWorld = (id: RawBuilder<string>) => sql<boolean>`EXISTS (
    SELECT 1 FROM findings f
    WHERE ${workspaceIs(scope, 'f')} AND f.resource_id = ${id} AND f.rule_id = ANY(${exposureRules()}::text[]) AND ${activeAt('f', now, live)})`;
  const rows = await sql<{ id: string }>`
    WITH asked AS (SELECT DISTINCT unnest(${resourceIds}::text[]) AS id)
    SELECT a.id FROM asked a
    WHERE ${openToWorld(sql.ref('a.id'))}
      OR EXISTS (SELECT 1 FROM ${edgesInWorkspace(scope)} e WHERE e.target = a.id AND (${openToWorld(sql.ref('e.source'))}
        OR EXISTS (SELECT 1 FROM ${internetNodesInWorkspace(scope)} n WHERE n.id = e.source)))
      OR EXISTS (SELECT 1 FROM ${edgesInWorkspace(scope)} e WHERE e.source = a.id AND ${openToWorld(sql.ref('e.target'))})`.execute(db);
  return new Set(rows.rows.map((r) => r.id));
}
