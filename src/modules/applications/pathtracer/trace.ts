import type { AppDeps } from '../../../deps.js';
import type { Scope } from '../../../platform/db/scope.js';
import { badRequest, notFound } from '../../../platform/http/errors.js';
import { traversalOf } from './edge-types.js';
import { Budget, existingNodes, expand, INTERNET, internetEntries, nodeSummaries, presentTypes, type Step, type WalkContext } from './walk.js';

/** Limits of a trace (see the README: bounds and how a truncated answer is reported). */
export const TRACE_LIMITS = {
  defaultDepth: 6,
  maxDepth: 12,
  defaultPaths: 10,
  maxPaths: 100,
  /** Nodes both searches may visit together. */
  maxNodes: 50_000,
  /** Edges read from the database. */
  maxEdges: 200_000,
  timeBudgetMs: 5_000,
  /** Steps of the in-memory path enumeration. */
  maxEnumerationSteps: 500_000,
};

export interface TraceInput {
  source: string;
  target: string;
  max_depth?: number;
  edge_types?: string[];
  max_paths?: number;
  max_nodes?: number;
}

/** A move between two nodes; parallel edges are one hop listing every edge type that allows it. */
interface Hop {
  from: string;
  to: string;
  types: Set<string>;
  edgeIds: Set<string>;
}

class HopGraph {
  readonly out = new Map<string, Map<string, Hop>>();
  readonly into = new Map<string, Set<string>>();

  add(step: Step) {
    let row = this.out.get(step.from);
    if (!row) this.out.set(step.from, (row = new Map()));
    let hop = row.get(step.to);
    if (!hop) {
      row.set(step.to, (hop = { from: step.from, to: step.to, types: new Set(), edgeIds: new Set() }));
      let back = this.into.get(step.to);
      if (!back) this.into.set(step.to, (back = new Set()));
      back.add(step.from);
    }
    hop.types.add(step.type);
    if (step.edgeId) hop.edgeIds.add(step.edgeId);
  }

  /** Hop distance of every node to `target` over the hops known so far (up to `limit`). */
  distancesTo(target: string, limit: number): Map<string, number> {
    const dist = new Map<string, number>([[target, 0]]);
    let frontier = [target];
    for (let d = 1; d <= limit && frontier.length; d++) {
      const next: string[] = [];
      for (const node of frontier) {
        for (const prev of this.into.get(node) ?? []) {
          if (!dist.has(prev)) {
            dist.set(prev, d);
            next.push(prev);
          }
        }
      }
      frontier = next;
    }
    return dist;
  }
}

interface Enumeration {
  paths: Hop[][];
  /** More paths within the depth limit exist than were returned. */
  capped: boolean;
  /** The step budget of the enumeration ran out. */
  exhausted: boolean;
}

/**
 * Simple paths from `source` to `target`, shortest first, at most `maxPaths`, none longer than
 * `maxDepth`. Depth-first per length L, pruned by the exact distance to the target over the known
 * hops (a partial path of length l continues to w only if l + 1 + dist(w) ≤ L), so nearly every
 * step extends towards a complete path.
 */
function enumerate(graph: HopGraph, source: string, target: string, maxDepth: number, maxPaths: number, maxSteps: number): Enumeration {
  const dist = graph.distancesTo(target, maxDepth);
  const result: Enumeration = { paths: [], capped: false, exhausted: false };
  const shortest = dist.get(source);
  if (shortest === undefined) return result;
  let steps = 0;
  const onPath = new Set<string>([source]);
  const hops: Hop[] = [];
  const walk = (node: string, length: number, L: number): boolean => {
    if (++steps > maxSteps) {
      result.exhausted = true;
      return false;
    }
    if (node === target) {
      if (length === L) {
        if (result.paths.length >= maxPaths) {
          result.capped = true;
          return false;
        }
        result.paths.push([...hops]);
      }
      return true;
    }
    const row = graph.out.get(node);
    if (!row) return true;
    for (const [next, hop] of [...row.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      const d = dist.get(next);
      if (d === undefined || length + 1 + d > L || onPath.has(next)) continue;
      onPath.add(next);
      hops.push(hop);
      const go = walk(next, length + 1, L);
      hops.pop();
      onPath.delete(next);
      if (!go) return false;
    }
    return true;
  };
  for (let L = shortest; L <= maxDepth; L++) if (!walk(source, 0, L)) break;
  return result;
}

/**
 * Paths between two nodes (or `internet`) through traversable edges, shortest first. Two breadth-first
 * searches, from the source along the edges and from the target against them, each level one batched
 * query (per 5,000 frontier nodes); the smaller frontier grows first. After levels a (forward) and
 * b (backward), every path of length ≤ a + b uses only edges already read, so the search stops as
 * soon as that covers max_depth, or holds max_paths paths, or one side runs out of nodes (then every
 * path is known). The paths are then enumerated in memory.
 */
export function createTracer(deps: Pick<AppDeps, 'database' | 'clock'>) {
  const db = deps.database.db;

  return async function trace(scope: Scope, input: TraceInput) {
    const started = performance.now();
    const maxDepth = input.max_depth ?? TRACE_LIMITS.defaultDepth;
    const maxPaths = input.max_paths ?? TRACE_LIMITS.defaultPaths;
    const source = input.source.trim();
    const target = input.target.trim();
    if (source === target) throw badRequest('source and target are the same', { field: 'target' });
    const traversal = traversalOf(input.edge_types);
    const known = await existingNodes(
      db,
      scope,
      [source, target].filter((id) => id !== INTERNET),
    );
    for (const [field, id] of [
      ['source', source],
      ['target', target],
    ] as const) {
      if (id !== INTERNET && !known.has(id)) throw notFound(`${field} node not found: ${id}`);
    }
    const budget = new Budget(input.max_nodes ?? TRACE_LIMITS.maxNodes, TRACE_LIMITS.maxEdges, started + TRACE_LIMITS.timeBudgetMs);
    const ctx: WalkContext = {
      db,
      scope,
      traversal: await presentTypes(db, scope, traversal),
      budget,
      internet:
        source === INTERNET || target === INTERNET ? { role: source === INTERNET ? 'source' : 'target', entries: await internetEntries(db, scope, deps.clock.now()) } : null,
    };
    const graph = new HopGraph();
    const forward = new Map<string, number>([[source, 0]]);
    const backward = new Map<string, number>([[target, 0]]);
    let forwardFrontier = [source];
    let backwardFrontier = [target];
    let a = 0;
    let b = 0;
    let complete = false;
    let found: Enumeration = { paths: [], capped: false, exhausted: false };
    for (;;) {
      if (forwardFrontier.length === 0 || backwardFrontier.length === 0) {
        complete = true;
        break;
      }
      if (a + b >= maxDepth) {
        complete = true;
        break;
      }
      if (budget.exceeded || budget.outOfTime()) break;
      const growForward = forwardFrontier.length <= backwardFrontier.length;
      const steps = await expand(ctx, growForward ? forwardFrontier : backwardFrontier, growForward ? 'successors' : 'predecessors');
      const seen = growForward ? forward : backward;
      const depth = (growForward ? a : b) + 1;
      const next: string[] = [];
      for (const step of steps) {
        graph.add(step);
        const reached = growForward ? step.to : step.from;
        if (!seen.has(reached)) {
          if (forward.size + backward.size >= budget.maxNodes) {
            budget.exceeded ??= 'max_nodes';
            continue;
          }
          seen.set(reached, depth);
          next.push(reached);
        }
      }
      if (growForward) {
        forwardFrontier = next;
        a = depth;
      } else {
        backwardFrontier = next;
        b = depth;
      }
      if (budget.exceeded) break;
      // Every path of length ≤ a + b is known now: enough of them ends the search.
      found = enumerate(graph, source, target, Math.min(a + b, maxDepth), maxPaths, TRACE_LIMITS.maxEnumerationSteps);
      if (found.paths.length >= maxPaths) {
        complete = true;
        break;
      }
    }
    found = enumerate(graph, source, target, maxDepth, maxPaths, TRACE_LIMITS.maxEnumerationSteps);
    const ids = new Set<string>([source, target]);
    for (const path of found.paths) for (const hop of path) ids.add(hop.to);
    const summaries = await nodeSummaries(db, scope, [...ids]);
    const truncated = !complete || found.exhausted;
    return {
      source,
      target,
      max_depth: maxDepth,
      max_paths: maxPaths,
      edge_types: traversal.described,
      shortest_length: found.paths[0]?.length ?? null,
      paths: found.paths.map((path) => ({
        length: path.length,
        node_ids: [source, ...path.map((hop) => hop.to)],
        hops: path.map((hop) => ({ from: hop.from, to: hop.to, edge_types: [...hop.types].sort(), edge_ids: [...hop.edgeIds].sort() })),
      })),
      nodes: Object.fromEntries(
        [...ids].map((id) => [id, id === INTERNET ? { name: 'Internet', type: 'internet', region: '' } : (summaries.get(id) ?? { name: id, type: '', region: '' })]),
      ),
      paths_capped: found.capped,
      truncated,
      truncation_reason: truncated ? (budget.exceeded ?? (found.exhausted ? 'enumeration_budget' : 'time_budget')) : null,
      explored: {
        forward_depth: a,
        backward_depth: b,
        nodes: forward.size + backward.size,
        edges: budget.edges,
        elapsed_ms: Math.round(performance.now() - started),
      },
    };
  };
}
