import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import type { AuditNode } from './evaluate.js';
import './tables.js';
import { countNodesOfTypes, neighboursOfNodeN, nodesInWorkspace } from '../../graph/index.js';

/** A node as the audit reads it, with the input an audit of it saw (node_audit_state.input_hash). */
export interface ReadNode extends AuditNode {
  input_hash: string;
  /** The node's record when the page was read (null: none); its record is written only if still that. */
  prior_hash: string | null;
  prior_version: string | null;
}

export interface NodePage {
  nodes: ReadNode[];
  /** Where the next page starts. */
  typeIndex: number;
  after: string;
}

/**
 * What makes a re-audit incremental (audit/incremental.ts): the rule-set version of each type and the
 * edge types each type's rules group by. Given, the reader returns only the nodes whose input or
 * version differs from what the last audit of them recorded.
 */
export interface ChangedOnly {
  versions: Map<string, string>;
  edges: Map<string, string[]>;
}

/**
 * Reads the workspace's nodes of the given types in keyset pages, one type after another, in the
 * order of the (workspace_id, type, id) index, so every page is one short index range whatever the
 * table's statistics. A single query over all types (`type = ANY(...) ORDER BY id`) was planned, on
 * a table nothing had analyzed yet (right after a bulk ingest), as a scan of every remaining node
 * of those types sorted for each page: quadratic, most of a first audit's time at 100,000 nodes.
 * With `changedOnly`, the nodes an earlier audit recorded with the same input and rule-set version
 * are passed over in the same index range (one probe of node_audit_state each, kept a nested loop by
 * the lateral subquery, so no page scans the whole state table). Returns null after the last page.
 */
export function nodePageReader(db: Kysely<Database>, scope: Scope, types: string[], pageSize: number, changedOnly?: ChangedOnly) {
  return async function readPage(from: { typeIndex: number; after: string } = { typeIndex: 0, after: '' }): Promise<NodePage | null> {
    for (let typeIndex = from.typeIndex, after = from.after; typeIndex < types.length; typeIndex++, after = '') {
      const type = types[typeIndex]!;
      const input = inputHash(changedOnly?.edges.get(type) ?? []);
      const version = changedOnly?.versions.get(type);
      // The record is read with the node: its write compares with it (incremental.ts).
      const record = changedOnly
        ? sql`LEFT JOIN LATERAL (
            SELECT s.input_hash, s.ruleset_version FROM node_audit_state s WHERE s.workspace_id = n.workspace_id AND s.node_id = n.id OFFSET 0
          ) s ON true`
        : sql`LEFT JOIN (SELECT NULL::uuid AS input_hash, NULL::text AS ruleset_version) s ON false`;
      const unchanged = changedOnly ? sql`AND (s.ruleset_version IS NULL OR s.input_hash <> i.input_hash OR s.ruleset_version <> ${version ?? ''})` : sql``;
      const { rows: nodes } = await sql<ReadNode>`
        SELECT n.id, n.type, n.native_id, n.name, n.region, n.account_id, n.properties, n.tags, i.input_hash::text AS input_hash,
          s.input_hash::text AS prior_hash, s.ruleset_version AS prior_version
        FROM ${nodesInWorkspace(scope)} n
        CROSS JOIN LATERAL (SELECT ${input} AS input_hash OFFSET 0) i
        ${record}
        WHERE n.type = ${type} AND n.id > ${after} ${unchanged}
        ORDER BY n.id
        LIMIT ${pageSize}`.execute(db);
      if (nodes.length === 0) continue;
      // A short page ends its type: the next read starts at the next type without an empty query.
      const next = nodes.length < pageSize ? { typeIndex: typeIndex + 1, after: '' } : { typeIndex, after: nodes[nodes.length - 1]!.id };
      return { nodes, ...next };
    }
    return null;
  };
}

/**
 * The input of a node `n`: its content_hash, and, when its type's rules group findings by edges, the
 * neighbours over those edges as the grouping reads them (findings/grouping.ts neighboursOf: edge
 * type, and the other node's id, native_id and type, in either direction), in a fixed order.
 */
function inputHash(edgeTypes: string[]): RawBuilder<string> {
  if (edgeTypes.length === 0) return sql<string>`n.content_hash`;
  return sql<string>`md5(n.content_hash::text || ${neighboursOfNodeN(edgeTypes)})::uuid`;
}

/** How many nodes of the given types the workspace holds (an audit's stats count the unchanged ones). */
export async function countNodes(db: Kysely<Database>, scope: Scope, types: string[]): Promise<number> {
  return countNodesOfTypes(db, scope, types);
}
