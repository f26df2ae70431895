import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import type { AuditNode } from './evaluate.js';

export interface NodePage {
  nodes: AuditNode[];
  /** Where the next page starts. */
  typeIndex: number;
  after: string;
}

/**
 * Reads the workspace's nodes of the given types in keyset pages, one type after another, in the
 * order of the (workspace_id, type, id) index, so every page is one short index range whatever the
 * table's statistics. A single query over all types (`type = ANY(...) ORDER BY id`) was planned, on
 * a table nothing had analyzed yet (right after a bulk ingest), as a scan of every remaining node
 * of those types sorted for each page: quadratic, most of a first audit's time at 100,000 nodes.
 * Returns null after the last page.
 */
export function nodePageReader(db: Kysely<Database>, scope: Scope, types: string[], pageSize: number) {
  return async function readPage(from: { typeIndex: number; after: string } = { typeIndex: 0, after: '' }): Promise<NodePage | null> {
    for (let typeIndex = from.typeIndex, after = from.after; typeIndex < types.length; typeIndex++, after = '') {
      const nodes = (await db
        .selectFrom('nodes')
        .select(['id', 'type', 'native_id', 'name', 'region', 'account_id', 'properties', 'tags'])
        .where('workspace_id', '=', scope.workspaceId)
        .where('type', '=', types[typeIndex]!)
        .where('id', '>', after)
        .orderBy('id')
        .limit(pageSize)
        .execute()) as AuditNode[];
      if (nodes.length === 0) continue;
      // A short page ends its type: the next read starts at the next type without an empty query.
      const next = nodes.length < pageSize ? { typeIndex: typeIndex + 1, after: '' } : { typeIndex, after: nodes[nodes.length - 1]!.id };
      return { nodes, ...next };
    }
    return null;
  };
}
