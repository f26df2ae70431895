import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { activeAt, hasLiveAcceptances } from './accepted.js';
import { builtinRules } from '../rule-catalog.js';

/**
 * Resources reachable from the Internet, found through the graph: a resource with an active finding
 * of an exposure rule (a security group or NACL open to the world, a public database, a public IP),
 * every node one edge away from such a resource (the instances that security group protects), and
 * every node with an edge from an Internet node (type `*.internet.*`).
 */
export async function exposedResources(db: Kysely<Database>, scope: Scope, now: Date): Promise<Set<string>> {
  const exposureRules = builtinRules()
    .filter((r) => r.definition?.exposure === 'internet')
    .map((r) => r.id);
  const live = await hasLiveAcceptances(db, scope.workspaceId, now);
  const rows = await sql<{ id: string }>`
    WITH open_to_world AS (
      SELECT DISTINCT f.resource_id AS id FROM findings f
      WHERE f.workspace_id = ${scope.workspaceId} AND f.rule_id = ANY(${exposureRules}::text[]) AND ${activeAt('f', now, live)}
    ), internet AS (
      SELECT n.id FROM nodes n WHERE n.workspace_id = ${scope.workspaceId} AND n.type LIKE '%.internet.%'
    )
    SELECT id FROM open_to_world
    UNION SELECT e.target FROM edges e JOIN open_to_world o ON e.source = o.id WHERE e.workspace_id = ${scope.workspaceId}
    UNION SELECT e.source FROM edges e JOIN open_to_world o ON e.target = o.id WHERE e.workspace_id = ${scope.workspaceId}
    UNION SELECT e.target FROM edges e JOIN internet i ON e.source = i.id WHERE e.workspace_id = ${scope.workspaceId}`.execute(db);
  return new Set(rows.rows.map((r) => r.id));
}
