import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, type Scope } from '../../../platform/db/scope.js';
import { storeFindingTexts, textIdOf, type FindingText } from '../findings/finding-texts.js';
import type { UnknownReason } from './tables.js';
import './tables.js';

/** An unknown outcome of one rule on one resource, outside an audit (an agent report's host rules). */
export interface ResourceUnknown {
  rule: { id: string; framework: string; control_id: string; text: FindingText };
  reason: UnknownReason;
  missing: string[];
  detail: string | null;
}

/**
 * Replaces the unknown outcomes of one resource under the rules just judged on it (`judged`), in the
 * caller's transaction: the rows of rules that decided go, the unknown ones are stored with their
 * rule's text (so they count for its controls), first_seen kept. What an audit batch does for AWS
 * nodes (audit/record-unknowns.ts), for the host rules of an agent report.
 */
export async function replaceResourceUnknowns(
  trx: Kysely<Database>,
  scope: Scope,
  now: Date,
  resource: { id: string; type: string; name: string; region: string; account_id: string },
  judged: string[],
  unknowns: ResourceUnknown[],
): Promise<void> {
  const unknownIds = unknowns.map((u) => u.rule.id);
  const decided = judged.filter((id) => !unknownIds.includes(id));
  if (decided.length) {
    await trx
      .deleteFrom('evaluation_unknowns')
      .where(inWorkspace(scope))
      .where('resource_id', '=', resource.id)
      .where('rule_id', '=', sql<string>`ANY(${decided}::text[])`)
      .execute();
  }
  if (unknowns.length === 0) return;
  const textIds = await storeFindingTexts(
    trx,
    scope,
    unknowns.map((u) => u.rule.text),
  );
  await trx
    .insertInto('evaluation_unknowns')
    .values(
      unknowns.map((u, i) => ({
        tenant_id: scope.tenantId,
        workspace_id: scope.workspaceId,
        resource_id: resource.id,
        rule_id: u.rule.id,
        resource_type: resource.type,
        resource_name: resource.name,
        region: resource.region,
        account_id: resource.account_id,
        framework: u.rule.framework,
        control_id: u.rule.control_id,
        text_id: textIds[i] ?? textIdOf(u.rule.text),
        reason: u.reason,
        missing_paths: u.missing,
        detail: u.detail,
        run_id: null,
        first_seen: now,
        last_seen: now,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'resource_id', 'rule_id']).doUpdateSet((eb) => ({
        resource_type: eb.ref('excluded.resource_type'),
        resource_name: eb.ref('excluded.resource_name'),
        region: eb.ref('excluded.region'),
        account_id: eb.ref('excluded.account_id'),
        framework: eb.ref('excluded.framework'),
        control_id: eb.ref('excluded.control_id'),
        text_id: eb.ref('excluded.text_id'),
        reason: eb.ref('excluded.reason'),
        missing_paths: eb.ref('excluded.missing_paths'),
        detail: eb.ref('excluded.detail'),
        run_id: null,
        last_seen: eb.ref('excluded.last_seen'),
      })),
    )
    .execute();
}
