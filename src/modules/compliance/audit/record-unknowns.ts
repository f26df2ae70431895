import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, workspaceIs, type Scope } from '../../../platform/db/scope.js';
import { ruleText, textIdOf } from '../findings/finding-texts.js';
import type { UnknownEvaluation } from './evaluate.js';
import '../unknowns/tables.js';
import './tables.js';
import { checkedRules, markChecked } from './vanished.js';
import { nodeOfRowExists } from '../../graph/index.js';

/**
 * Brings evaluation_unknowns in line with one evaluated batch, in the batch's transaction: the
 * batch's unknown evaluations are stored (first_seen kept, the rest refreshed), and the rows of its
 * resources under the audited rules that the batch decided (violated or passed) are deleted.
 * `prior` is false when the workspace had no unknown row of these rules when the audit began: then
 * there is nothing of this batch's resources to delete.
 */
export async function recordBatchUnknowns(
  trx: Kysely<Database>,
  scope: Scope,
  now: Date,
  runId: string | null,
  unknowns: Map<string, UnknownEvaluation>,
  resourceIds: string[],
  ruleIds: string[],
  prior: boolean,
): Promise<void> {
  if (prior && resourceIds.length && ruleIds.length) {
    // The map is keyed as findings are, `<rule_id>:<resource_id>` (findings/identity.ts).
    const kept = [...unknowns.keys()];
    await sql`
      DELETE FROM evaluation_unknowns u
      WHERE ${workspaceIs(scope, 'u')}
        AND u.resource_id = ANY(${resourceIds}::text[])
        AND u.rule_id = ANY(${ruleIds}::text[])
        AND NOT ((u.rule_id || ':' || u.resource_id) = ANY(${kept}::text[]))`.execute(trx);
  }
  if (unknowns.size === 0) return;
  const rows = [...unknowns.values()];
  const column = <T>(pick: (u: UnknownEvaluation) => T) => rows.map(pick);
  await sql`
    INSERT INTO evaluation_unknowns (tenant_id, workspace_id, resource_id, rule_id, resource_type, resource_name, region, account_id,
      framework, control_id, text_id, reason, missing_paths, detail, run_id, first_seen, last_seen)
    SELECT ${scope.tenantId}::uuid, ${scope.workspaceId}::uuid, u.resource_id, u.rule_id, u.resource_type, u.resource_name, u.region,
      u.account_id, u.framework, u.control_id, u.text_id, u.reason,
      CASE WHEN u.missing = '' THEN '{}'::text[] ELSE string_to_array(u.missing, E'\\n') END,
      u.detail, ${runId}::uuid, ${now}, ${now}
    FROM unnest(
      ${column((u) => u.node.id)}::text[], ${column((u) => u.rule.id)}::text[], ${column((u) => u.node.type)}::text[],
      ${column((u) => u.node.name)}::text[], ${column((u) => u.node.region)}::text[], ${column((u) => u.node.account_id ?? '')}::text[],
      ${column((u) => u.rule.framework)}::text[], ${column((u) => u.rule.control_id)}::text[], ${column((u) => textIdOf(ruleText(u.rule)))}::text[],
      ${column((u) => u.reason)}::text[], ${column((u) => u.missing.join('\n'))}::text[], ${column((u) => u.detail)}::text[]
    ) AS u(resource_id, rule_id, resource_type, resource_name, region, account_id, framework, control_id, text_id, reason, missing, detail)
    ON CONFLICT (workspace_id, resource_id, rule_id) DO UPDATE SET
      resource_type = excluded.resource_type, resource_name = excluded.resource_name, region = excluded.region,
      account_id = excluded.account_id, framework = excluded.framework, control_id = excluded.control_id, text_id = excluded.text_id,
      reason = excluded.reason, missing_paths = excluded.missing_paths, detail = excluded.detail, run_id = excluded.run_id,
      last_seen = excluded.last_seen`.execute(trx);
}

/** Whether the workspace has unknown rows of these rules (an audit without any skips the per-batch delete). */
export async function hasUnknowns(db: Kysely<Database>, scope: Scope, ruleIds: string[]): Promise<boolean> {
  if (ruleIds.length === 0) return false;
  const row = await db
    .selectFrom('evaluation_unknowns')
    .select('rule_id')
    .where(inWorkspace(scope))
    .where('rule_id', '=', sql<string>`ANY(${ruleIds}::text[])`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Deletes the unknown rows whose resource no longer exists (or changed type), whatever their rule
 * (an agent's host rules too): what a vanished resource leaves, after the batches. The resources'
 * audit records go in the same statement (incremental.ts): a node recreated with the same content is
 * evaluated again, so its unknowns come back.
 */
export async function clearVanishedUnknowns(db: Kysely<Database>, scope: Scope): Promise<number> {
  // Once checked in full, only the resources deleted or retyped since are looked at (vanished.ts).
  const logged = (await checkedRules(db, scope, [ALL_UNKNOWNS])).has(ALL_UNKNOWNS);
  const removed = logged ? sql`AND u.resource_id IN (SELECT r.node_id FROM audit_removed_nodes r WHERE ${workspaceIs(scope, 'r')})` : sql``;
  const result = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM evaluation_unknowns u
      WHERE ${workspaceIs(scope, 'u')} ${removed}
        AND NOT ${nodeOfRowExists('u.workspace_id', 'u.resource_id', 'u.resource_type')}
      RETURNING u.resource_id
    ), forgotten AS (
      DELETE FROM node_audit_state s WHERE ${workspaceIs(scope, 's')} AND s.node_id IN (SELECT resource_id FROM gone)
    )
    SELECT count(*)::int AS n FROM gone`.execute(db);
  if (!logged) await markChecked(db, scope, [ALL_UNKNOWNS]);
  return result.rows[0]?.n ?? 0;
}

/** The mark of audit_vanished_checked for the unknown evaluations, whatever their rule. */
const ALL_UNKNOWNS = '*';
