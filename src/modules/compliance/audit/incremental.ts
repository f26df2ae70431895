import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, workspaceIs, type Scope } from '../../../platform/db/scope.js';
import type { BatchResult } from './evaluate.js';
import type { ReadNode } from './node-pages.js';
import './tables.js';

/**
 * Re-audits do only what changed (issue 23 item 3). node_audit_state records, per node, the input the
 * last audit evaluated (nodes.content_hash with its neighbours over the edges its rules group by)
 * and the version of the rules it evaluated on it (ruleset-version.ts). An audit reads only the nodes
 * whose input or version differs (node-pages.ts); the others' findings and unknown evaluations are
 * left exactly as they are, which is what evaluating them again would write: a rule condition is a
 * function of the node alone (CEL here has no clock: `now()` does not compile, and the time rules
 * compare timestamps the node carries, such as a credential report's generatedTime), and the
 * version covers everything of the rules that decides or is written.
 *
 * The record is written in the transaction of the batch that wrote the node's findings, only when
 * every evaluation of the node was decided by the node and its rules: violated, passed, unknown for
 * missing configuration, or an evaluation error (a condition failing on the node fails the same way
 * each time). An evaluation that ran out of time, or was not run because its rule was stopped for the
 * run, depends on the machine and the run as well: such a node is evaluated again by the next audit
 * (which is also what lets the rule budget count a rule's consecutive runs over budget).
 */

/** The nodes of a batch an evaluation of which depended on more than the node (its budget, a rule stopped for the run). */
function undecided(batch: BatchResult): Set<string> {
  const ids = new Set<string>();
  for (const u of batch.unknowns.values()) if (u.reason === 'budget_exceeded') ids.add(u.node.id);
  return ids;
}

/**
 * Records what the batch evaluated, in its transaction. Compare-and-set against what the page read
 * (`prior`): a record invalidated since (a user resolved one of the node's findings meanwhile, see
 * the trigger of migration 0031) is left invalid, so the next audit evaluates the node again. Nodes an
 * evaluation of which ran out of time lose their record.
 */
export async function recordAuditState(trx: Kysely<Database>, scope: Scope, nodes: ReadNode[], versions: Map<string, string>, batch: BatchResult): Promise<void> {
  if (nodes.length === 0) return;
  const failed = undecided(batch);
  const done = nodes.filter((n) => !failed.has(n.id) && versions.has(n.type));
  if (failed.size) {
    await trx
      .deleteFrom('node_audit_state')
      .where(inWorkspace(scope))
      .where('node_id', '=', sql<string>`ANY(${[...failed]}::text[])`)
      .execute();
  }
  const replace = done.filter((n) => n.prior_version !== null);
  const add = done.filter((n) => n.prior_version === null);
  const column = <T>(list: ReadNode[], pick: (n: ReadNode) => T) => list.map(pick);
  if (replace.length) {
    await sql`
      UPDATE node_audit_state AS s SET input_hash = v.input_hash, ruleset_version = v.version
      FROM unnest(${column(replace, (n) => n.id)}::text[], ${column(replace, (n) => n.input_hash)}::uuid[], ${column(replace, (n) => versions.get(n.type)!)}::text[],
        ${column(replace, (n) => n.prior_hash)}::uuid[], ${column(replace, (n) => n.prior_version)}::text[]) AS v(node_id, input_hash, version, prior_hash, prior_version)
      WHERE ${workspaceIs(scope, 's')} AND s.node_id = v.node_id AND s.input_hash = v.prior_hash AND s.ruleset_version = v.prior_version`.execute(trx);
  }
  if (add.length) {
    // A record that appeared since the read is an invalidation's: it stays.
    await sql`
      INSERT INTO node_audit_state (tenant_id, workspace_id, node_id, input_hash, ruleset_version)
      SELECT ${scope.tenantId}::uuid, ${scope.workspaceId}::uuid, v.node_id, v.input_hash, v.version
      FROM unnest(${column(add, (n) => n.id)}::text[], ${column(add, (n) => n.input_hash)}::uuid[], ${column(add, (n) => versions.get(n.type)!)}::text[]) AS v(node_id, input_hash, version)
      ON CONFLICT (workspace_id, node_id) DO NOTHING`.execute(trx);
  }
}

/** Forgets the records of these resources (their findings or unknowns were cleared as vanished), in the caller's transaction. */
export async function forgetAuditState(trx: Kysely<Database>, workspaceId: string, nodeIds: string[]): Promise<void> {
  if (nodeIds.length === 0) return;
  await trx
    .deleteFrom('node_audit_state')
    .where(inWorkspace({ workspaceId }))
    .where('node_id', '=', sql<string>`ANY(${[...new Set(nodeIds)]}::text[])`)
    .execute();
}
