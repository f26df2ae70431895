import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { missingNodes, nodeStates, upsertEdges, upsertNodes, type EdgeRecord, type NodeRecord } from '../../graph/index.js';
import type { ImportedNode } from './import-record.js';

/**
 * Writes the nodes an import states (AWS Config items) into the workspace's graph through the graph
 * module, as a discovery job writes what its plugins found (discovery-job.ts), and tells which nodes
 * changed, so the pipeline audits only those.
 *
 * Edges follow discovery's rule: an edge is written only when both ends are nodes (the plugins keep
 * only relations to resources they read; the edges table's foreign keys require it). An edge to a
 * resource neither in the graph nor in this batch is returned as pending: its target may come later
 * in the file, so the pipeline passes the pending edges of every batch to applyImportedEdges once
 * all nodes are written, and whatever still has no target is dropped then.
 */
export interface AppliedNodes {
  upserted: number;
  /** New nodes and nodes whose content (nodes.content_hash: what a rule can read) differs from before. */
  changedNodeIds: string[];
  edgesWritten: number;
  pendingEdges: EdgeRecord[];
}

/** The import's view of a node; a node another source wrote keeps that source (a Terraform address makes patches possible). */
const IMPORT_SOURCE = { kind: 'aws-config' } as const;

/** One node per id, the last stated winning, as in a discovery job's merge of its plugins. */
function lastWins(nodes: ImportedNode[]): ImportedNode[] {
  return [...new Map(nodes.map((n) => [n.node.id, n])).values()];
}

function edgesOf(nodes: ImportedNode[]): EdgeRecord[] {
  const edges = new Map<string, EdgeRecord>();
  for (const n of nodes) {
    for (const e of n.edges) {
      if (e.target === n.node.id) continue;
      edges.set(`${n.node.id}\u0000${e.target}\u0000${e.type}`, { source: n.node.id, target: e.target, type: e.type, properties: {} });
    }
  }
  return [...edges.values()];
}

/** Writes the edges whose both ends are nodes; returns how many were written and the others. */
export async function applyImportedEdges(db: Kysely<Database>, scope: Scope, edges: EdgeRecord[], now: Date): Promise<{ written: number; pending: EdgeRecord[] }> {
  if (edges.length === 0) return { written: 0, pending: [] };
  const missing = new Set(
    await missingNodes(
      db,
      scope,
      edges.flatMap((e) => [e.source, e.target]),
    ),
  );
  const ready = edges.filter((e) => !missing.has(e.source) && !missing.has(e.target));
  if (ready.length) await upsertEdges(db, scope, ready, now);
  return { written: ready.length, pending: edges.filter((e) => missing.has(e.source) || missing.has(e.target)) };
}

export async function applyImportedNodes(db: Kysely<Database>, scope: Scope, nodes: ImportedNode[], now: Date): Promise<AppliedNodes> {
  const batch = lastWins(nodes);
  if (batch.length === 0) return { upserted: 0, changedNodeIds: [], edgesWritten: 0, pendingEdges: [] };
  const ids = batch.map((n) => n.node.id);
  const before = await nodeStates(db, scope, ids);
  const records: NodeRecord[] = batch.map((n) => ({ ...n.node, source: before.get(n.node.id)?.source ?? IMPORT_SOURCE }));
  await upsertNodes(db, scope, records, now, false, { skipUnchanged: true });
  const after = await nodeStates(db, scope, ids);
  const changedNodeIds = ids.filter((id) => before.get(id)?.content_hash !== after.get(id)?.content_hash);
  const edges = await applyImportedEdges(db, scope, edgesOf(batch), now);
  return { upserted: batch.length, changedNodeIds, edgesWritten: edges.written, pendingEdges: edges.pending };
}
