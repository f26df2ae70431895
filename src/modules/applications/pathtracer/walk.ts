import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { exposedResources } from '../../compliance/index.js';
import { INTERNET_EDGE, type Traversal } from './edge-types.js';
import { edgesAt, edgeTypesPresent, internetNodeIds, nodesAmong } from '../../graph/index.js';

/** The virtual endpoint standing for the Internet. */
export const INTERNET = 'internet';

/** One traversable move: `from` → `to` through edge `edgeId` of `type` (null id: the virtual internet edge). */
export interface Step {
  from: string;
  to: string;
  type: string;
  edgeId: string | null;
}

/** Limits every walk shares; `exceeded` names the first one hit. */
export class Budget {
  edges = 0;
  exceeded: 'max_nodes' | 'max_edges' | 'time_budget' | null = null;

  constructor(
    readonly maxNodes: number,
    readonly maxEdges: number,
    readonly deadline: number,
  ) {}

  outOfTime(): boolean {
    if (!this.exceeded && performance.now() > this.deadline) this.exceeded = 'time_budget';
    return this.exceeded === 'time_budget';
  }
}

const FRONTIER_CHUNK = 5000;

/**
 * Where the `internet` endpoint leads: the resources compliance/findings/exposure.ts finds reachable
 * from the Internet (with an active finding of an exposure rule, one edge from such a resource, or
 * targeted by an Internet node) and the graph's own Internet nodes (type `*.internet.*`).
 */
export async function internetEntries(db: Kysely<Database>, scope: Scope, now: Date): Promise<Set<string>> {
  const [exposed, internetNodes] = await Promise.all([exposedResources(db, scope, now), internetNodeIds(db, scope)]);
  for (const id of internetNodes) exposed.add(id);
  return exposed;
}

/**
 * The traversal without the edge types the workspace has no edge of: a walk then probes only the
 * sides of a node that can lead somewhere (most graphs have no reverse-direction types such as
 * `trusts`, which halves the index probes of every level). One query, one index probe per type.
 */
export async function presentTypes(db: Kysely<Database>, scope: Scope, traversal: Traversal): Promise<Traversal> {
  const types = [...new Set([...traversal.forward, ...traversal.reverse])];
  if (types.length === 0) return traversal;
  const present = await edgeTypesPresent(db, scope, types);
  return {
    forward: traversal.forward.filter((t) => present.has(t)),
    reverse: traversal.reverse.filter((t) => present.has(t)),
    described: traversal.described,
  };
}

export interface WalkContext {
  db: Kysely<Database>;
  scope: Scope;
  traversal: Traversal;
  budget: Budget;
  /** Set when one endpoint is `internet`: its role and the resources it connects to. */
  internet: { role: 'source' | 'target'; entries: Set<string> } | null;
}

/**
 * The moves out of (`successors`) or into (`predecessors`) a set of nodes, one statement per 5,000
 * nodes: edges found through the (workspace, source, …) and (workspace, target) indexes, each read
 * in the orientation its type is traversed. Stops reading when the edge budget is spent.
 */
export async function expand(ctx: WalkContext, frontier: string[], mode: 'successors' | 'predecessors'): Promise<Step[]> {
  const { db, scope, traversal, budget, internet } = ctx;
  const steps: Step[] = [];
  if (internet) {
    const virtual = frontier.includes(INTERNET);
    if (mode === 'successors' && internet.role === 'source' && virtual) for (const e of internet.entries) steps.push({ from: INTERNET, to: e, type: INTERNET_EDGE, edgeId: null });
    if (mode === 'predecessors' && internet.role === 'target' && virtual)
      for (const e of internet.entries) steps.push({ from: e, to: INTERNET, type: INTERNET_EDGE, edgeId: null });
    if (mode === 'successors' && internet.role === 'target')
      for (const n of frontier) if (internet.entries.has(n)) steps.push({ from: n, to: INTERNET, type: INTERNET_EDGE, edgeId: null });
    if (mode === 'predecessors' && internet.role === 'source')
      for (const n of frontier) if (internet.entries.has(n)) steps.push({ from: INTERNET, to: n, type: INTERNET_EDGE, edgeId: null });
  }
  const real = frontier.filter((n) => n !== INTERNET);
  // successors: forward types leave through `source`, reverse types through `target`; predecessors: the opposite.
  const bySource = mode === 'successors' ? traversal.forward : traversal.reverse;
  const byTarget = mode === 'successors' ? traversal.reverse : traversal.forward;
  for (let i = 0; i < real.length; i += FRONTIER_CHUNK) {
    if (budget.outOfTime()) break;
    const chunk = real.slice(i, i + FRONTIER_CHUNK);
    const left = budget.maxEdges - budget.edges;
    if (left <= 0) {
      budget.exceeded ??= 'max_edges';
      break;
    }
    // One index probe per frontier node (graph's edgesAt).
    if (bySource.length === 0 && byTarget.length === 0) break;
    const rows = await edgesAt(db, scope, chunk, bySource, byTarget, left + 1);
    if (rows.length > left) budget.exceeded ??= 'max_edges';
    for (const row of rows.slice(0, left)) {
      budget.edges++;
      // `out`: the row was found from its source. Traversal orientation follows the type's direction.
      const sourceSide = row.out;
      const followsEdge = mode === 'successors' ? sourceSide : !sourceSide;
      steps.push(followsEdge ? { from: row.source, to: row.target, type: row.type, edgeId: row.id } : { from: row.target, to: row.source, type: row.type, edgeId: row.id });
    }
  }
  return steps;
}

/** Ids among `ids` that are nodes of the scope. */
export async function existingNodes(db: Kysely<Database>, scope: Scope, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await sql<{ id: string }>`SELECT n.id FROM ${nodesAmong(scope, ids)} n`.execute(db);
  return new Set(rows.rows.map((r) => r.id));
}

export interface NodeSummary {
  id: string;
  name: string;
  type: string;
  region: string;
}

export async function nodeSummaries(db: Kysely<Database>, scope: Scope, ids: string[]): Promise<Map<string, NodeSummary>> {
  const out = new Map<string, NodeSummary>();
  const real = ids.filter((id) => id !== INTERNET);
  for (let i = 0; i < real.length; i += FRONTIER_CHUNK) {
    const rows = await sql<NodeSummary>`SELECT n.id, n.name, n.type, n.region FROM ${nodesAmong(scope, real.slice(i, i + FRONTIER_CHUNK))} n`.execute(db);
    for (const row of rows.rows) out.set(row.id, row);
  }
  return out;
}
