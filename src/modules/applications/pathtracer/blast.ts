import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { AppDeps } from '../../../deps.js';
import { inWorkspace, inTenant, type Scope } from '../../../platform/db/scope.js';
import { notFound } from '../../../platform/http/errors.js';
import { activeFindingsTable } from '../../compliance/index.js';
import { storedFilter } from '../filter/sql.js';
import { emptyCounts, healthOf, type SeverityKey } from '../rollup.js';
import { membersOf, servicePredicate } from '../business-service.js';
import { traversalOf } from './edge-types.js';
import { Budget, existingNodes, expand, INTERNET, internetEntries, nodeSummaries, presentTypes, type WalkContext } from './walk.js';
import { nodesAmong } from '../../graph/index.js';

export const BLAST_LIMITS = {
  defaultDepth: 10,
  maxDepth: 32,
  defaultNodes: 10_000,
  maxNodes: 100_000,
  maxEdges: 500_000,
  timeBudgetMs: 10_000,
  defaultListed: 1000,
  maxListed: 10_000,
  /** Applications and services checked for being hit. */
  maxGroups: 500,
};

export interface BlastInput {
  source: string;
  max_depth?: number;
  edge_types?: string[];
  max_nodes?: number;
  limit?: number;
}

const ID_CHUNK = 20_000;

/** The applications and business services the reached nodes belong to, with how many of them each holds. */
async function affectedGroups(db: Kysely<Database>, scope: Scope, reached: string[]) {
  const apps = await db
    .selectFrom('applications')
    .select(['id', 'name', 'derived', 'filter'])
    .where(inWorkspace(scope))
    .where(inTenant(scope.tenantId))
    .orderBy(sql`lower(name)`)
    .orderBy('id')
    .limit(BLAST_LIMITS.maxGroups)
    .execute();
  const services = await db
    .selectFrom('business_services')
    .select(['id', 'name', 'criticality'])
    .where(inWorkspace(scope))
    .where(inTenant(scope.tenantId))
    .orderBy(sql`lower(name)`)
    .orderBy('id')
    .limit(BLAST_LIMITS.maxGroups)
    .execute();
  const members = await membersOf(
    db,
    scope,
    services.map((s) => s.id),
  );
  const groups = [
    ...apps.map((a) => ({ kind: 'application' as const, id: a.id, predicate: storedFilter(a.filter).predicate('n') })),
    ...services.filter((s) => members.get(s.id)!.length > 0).map((s) => ({ kind: 'service' as const, id: s.id, predicate: servicePredicate(members.get(s.id)!) })),
  ];
  const counts = new Map<string, number>();
  if (groups.length && reached.length) {
    for (let i = 0; i < reached.length; i += ID_CHUNK) {
      const values = groups.map((g, k) => sql`(${k}::int, ${g.predicate})`);
      const rows = await sql<{ g: number; n: number }>`
        SELECT k.g, count(*)::int AS n FROM ${nodesAmong(scope, reached.slice(i, i + ID_CHUNK))} n CROSS JOIN LATERAL (VALUES ${sql.join(values)}) AS k(g, hit)
        WHERE k.hit GROUP BY k.g`.execute(db);
      for (const row of rows.rows) {
        const g = groups[row.g]!;
        counts.set(`${g.kind}:${g.id}`, (counts.get(`${g.kind}:${g.id}`) ?? 0) + row.n);
      }
    }
  }
  return {
    applications: apps
      .filter((a) => counts.has(`application:${a.id}`))
      .map((a) => ({ id: a.id, name: a.name, derived: a.derived, reached_resources: counts.get(`application:${a.id}`)! })),
    services: services
      .filter((s) => counts.has(`service:${s.id}`))
      .map((s) => ({ id: s.id, name: s.name, criticality: s.criticality, reached_resources: counts.get(`service:${s.id}`)! })),
  };
}

/**
 * Everything reachable from a node (or from `internet`) through traversable edges: a breadth-first
 * search, one batched query per level (per 5,000 frontier nodes), bounded by depth, node count, edge
 * count and time. Besides the reached nodes it answers what they hold: node types, active findings
 * by severity, and the applications and business services hit.
 */
export function createBlastRadius(deps: Pick<AppDeps, 'database' | 'clock'>) {
  const db = deps.database.db;

  async function facts(scope: Scope, reached: string[], now: Date) {
    const active = await activeFindingsTable(db, scope, now);
    const byType = new Map<string, number>();
    const bySeverity = emptyCounts();
    for (let i = 0; i < reached.length; i += ID_CHUNK) {
      const chunk = reached.slice(i, i + ID_CHUNK);
      const [types, severities] = await Promise.all([
        sql<{ type: string; n: number }>`SELECT n.type, count(*)::int AS n FROM ${nodesAmong(scope, chunk)} n GROUP BY n.type`.execute(db),
        // One probe of the (workspace_id, resource_id) index per node, whatever the planner knows.
        sql<{ severity: SeverityKey; n: number }>`SELECT f.severity, count(*)::int AS n FROM unnest(${chunk}::text[]) AS r(id)
          CROSS JOIN LATERAL (SELECT f.severity FROM ${active} f WHERE f.resource_id = r.id OFFSET 0) f
          GROUP BY f.severity`.execute(db),
      ]);
      for (const row of types.rows) byType.set(row.type, (byType.get(row.type) ?? 0) + row.n);
      for (const row of severities.rows) bySeverity[row.severity] += row.n;
    }
    return {
      by_type: [...byType].map(([type, nodes]) => ({ type, nodes })).sort((x, y) => y.nodes - x.nodes || x.type.localeCompare(y.type)),
      findings_by_severity: bySeverity,
    };
  }

  return async function blastRadius(scope: Scope, input: BlastInput) {
    const started = performance.now();
    const now = deps.clock.now();
    const maxDepth = input.max_depth ?? BLAST_LIMITS.defaultDepth;
    const maxNodes = input.max_nodes ?? BLAST_LIMITS.defaultNodes;
    const listed = input.limit ?? BLAST_LIMITS.defaultListed;
    const source = input.source.trim();
    const traversal = traversalOf(input.edge_types);
    if (source !== INTERNET && !(await existingNodes(db, scope, [source])).has(source)) throw notFound(`source node not found: ${source}`);
    const budget = new Budget(maxNodes, BLAST_LIMITS.maxEdges, started + BLAST_LIMITS.timeBudgetMs);
    const ctx: WalkContext = {
      db,
      scope,
      traversal: await presentTypes(db, scope, traversal),
      budget,
      internet: source === INTERNET ? { role: 'source', entries: await internetEntries(db, scope, now) } : null,
    };
    // depth and the first hop that reached each node (breadth-first: one of its shortest ways in).
    const reached = new Map<string, { depth: number; from: string; types: Set<string> }>();
    const visited = new Set<string>([source]);
    let frontier = [source];
    let depth = 0;
    const byDepth: Array<{ depth: number; nodes: number }> = [];
    while (frontier.length && depth < maxDepth && !budget.exceeded && !budget.outOfTime()) {
      const steps = await expand(ctx, frontier, 'successors');
      depth++;
      const next: string[] = [];
      for (const step of steps) {
        const known = reached.get(step.to);
        if (known) {
          if (known.depth === depth && known.from === step.from) known.types.add(step.type);
          continue;
        }
        if (visited.has(step.to)) continue;
        if (reached.size >= maxNodes) {
          budget.exceeded ??= 'max_nodes';
          break;
        }
        visited.add(step.to);
        reached.set(step.to, { depth, from: step.from, types: new Set([step.type]) });
        next.push(step.to);
      }
      if (next.length) byDepth.push({ depth, nodes: next.length });
      frontier = next;
    }
    // Did the depth limit hide anything? One more level tells (read, not kept).
    let beyondDepth = false;
    if (frontier.length && depth >= maxDepth && !budget.exceeded && !budget.outOfTime()) {
      const probe = new Budget(1, Math.min(10_000, BLAST_LIMITS.maxEdges - budget.edges), budget.deadline);
      const steps = await expand({ ...ctx, budget: probe }, frontier, 'successors');
      beyondDepth = steps.some((s) => !visited.has(s.to));
    }
    const ids = [...reached.keys()].filter((id) => id !== INTERNET);
    const [summary, groups] = await Promise.all([facts(scope, ids, now), affectedGroups(db, scope, ids)]);
    const shown = [...reached.entries()].sort((x, y) => x[1].depth - y[1].depth || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).slice(0, listed);
    const summaries = await nodeSummaries(
      db,
      scope,
      shown.map(([id]) => id),
    );
    const truncated = budget.exceeded !== null;
    return {
      source,
      max_depth: maxDepth,
      edge_types: traversal.described,
      total_reached: reached.size,
      depth_reached: byDepth.length ? byDepth[byDepth.length - 1]!.depth : 0,
      by_depth: byDepth,
      by_type: summary.by_type,
      findings_by_severity: summary.findings_by_severity,
      health: healthOf(summary.findings_by_severity),
      applications: groups.applications,
      services: groups.services,
      nodes: shown.map(([id, r]) => {
        const node = summaries.get(id);
        return { id, name: node?.name ?? id, type: node?.type ?? '', region: node?.region ?? '', depth: r.depth, via: { from: r.from, edge_types: [...r.types].sort() } };
      }),
      nodes_listed: shown.length,
      depth_limited: beyondDepth,
      truncated,
      truncation_reason: budget.exceeded,
      explored: { nodes: visited.size, edges: budget.edges, elapsed_ms: Math.round(performance.now() - started) },
    };
  };
}
