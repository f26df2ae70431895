import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, workspaceIs, type Scope } from '../../../platform/db/scope.js';
import './tables.js';
import { nodeOfRowExists } from '../../graph/index.js';

/**
 * Where an audit looks for vanished resources (migration 0031). An audit that skips unchanged nodes
 * does not see their findings, so "every open finding the audit did not see" is no longer a short
 * list: it is nearly every finding. Instead, the database logs each node deleted or retyped
 * (audit_removed_nodes, by trigger), and once an audit has checked every open finding of a rule
 * against the nodes (audit_vanished_checked), later audits check that rule's findings only on the
 * logged resources. A logged resource is forgotten only when none of its open findings or unknown
 * evaluations is left without its node, so an audit of other rules (one framework) loses nothing.
 */

/** The rules among `ruleIds` (or '*', the unknowns) whose findings an audit has checked in full. */
export async function checkedRules(db: Kysely<Database>, scope: Scope, ruleIds: string[]): Promise<Set<string>> {
  if (ruleIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('audit_vanished_checked')
    .select('rule_id')
    .where(inWorkspace(scope))
    .where('rule_id', '=', sql<string>`ANY(${ruleIds}::text[])`)
    .execute();
  return new Set(rows.map((r) => r.rule_id));
}

/** Records that these rules' findings (or '*': the unknowns) have been checked in full. */
export async function markChecked(db: Kysely<Database>, scope: Scope, ruleIds: string[]): Promise<void> {
  if (ruleIds.length === 0) return;
  await sql`
    INSERT INTO audit_vanished_checked (tenant_id, workspace_id, rule_id)
    SELECT ${scope.tenantId}::uuid, ${scope.workspaceId}::uuid, unnest(${ruleIds}::text[])
    ON CONFLICT (workspace_id, rule_id) DO NOTHING`.execute(db);
}

/**
 * After the audit resolved and cleared what vanished: the node records of logged resources that are
 * gone, and the log entries of resources none of whose open findings or unknowns is left without its
 * node (a resource recreated, or whose findings this audit resolved).
 */
export async function settleRemovals(db: Kysely<Database>, scope: Scope): Promise<void> {
  await sql`
    DELETE FROM node_audit_state s
    USING audit_removed_nodes r
    WHERE ${workspaceIs(scope, 's')} AND r.workspace_id = s.workspace_id AND r.node_id = s.node_id
      AND NOT ${nodeOfRowExists('s.workspace_id', 's.node_id')}`.execute(db);
  await sql`
    DELETE FROM audit_removed_nodes r
    WHERE ${workspaceIs(scope, 'r')}
      AND NOT EXISTS (
        SELECT 1 FROM finding_rows f
        WHERE f.workspace_id = r.workspace_id AND f.resource_id = r.node_id AND f.status = 'open'
          AND NOT ${nodeOfRowExists('f.workspace_id', 'f.resource_id', 'f.resource_type')})
      AND NOT EXISTS (
        SELECT 1 FROM evaluation_unknowns u
        WHERE u.workspace_id = r.workspace_id AND u.resource_id = r.node_id
          AND NOT ${nodeOfRowExists('u.workspace_id', 'u.resource_id', 'u.resource_type')})`.execute(db);
}
