import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { json } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { emitEvents, type NewEvent } from '../../../platform/events/outbox.js';
import { unnestInsert, type ColumnType } from '../../../platform/db/unnest-insert.js';
import type { FindingsTable } from '../tables.js';
import { groupsOf } from '../findings/grouping.js';
import type { BatchResult } from './evaluate.js';
import { findingCreated, findingReopened, findingResolved, severityChanged } from './finding-events.js';

export interface ReconcileCounts {
  created: number;
  resolved: number;
  reopened: number;
  severityChanged: number;
}

interface Existing {
  id: string;
  status: 'open' | 'resolved';
  severity: string;
  base_severity: string;
  rule_id: string;
  resource_id: string;
  group_id: string;
  group_cause: string | null;
}

const EVENT_COLUMNS = [
  'id', 'rule_id', 'resource_id', 'created_at', 'framework', 'control_id', 'severity', 'title', 'description', 'resource_type',
  'resource_name', 'region', 'remediation',
] as const;

/** The per-row columns of a new finding; the rest (scope, status, timestamps) are one value per batch. */
const NEW_FINDING_COLUMNS: Record<string, ColumnType> = {
  id: 'text', rule_id: 'text', framework: 'text', control_id: 'text', framework_mappings: 'jsonb', base_severity: 'text',
  severity: 'text', title: 'text', description: 'text', remediation: 'text', resource_id: 'text', resource_type: 'text',
  resource_name: 'text', region: 'text', account_id: 'text', group_id: 'text', group_cause: 'text',
};

const INSERT_CHUNK = 5000;

/**
 * Brings the findings of one evaluated batch in line with what the audit saw, in one short
 * transaction with its events: new violations create findings, violations of resolved findings
 * reopen them, clean evaluations resolve open ones, and a changed rule severity is applied. Every
 * violation gets its root-cause group again, so a finding whose cause changed (or whose rule now
 * names a cause) moves to the group of its cause.
 */
export async function reconcileBatch(
  db: Kysely<Database>,
  scope: Scope,
  now: Date,
  batch: BatchResult,
  resourceIds: string[],
  ruleIds: string[],
): Promise<ReconcileCounts> {
  const counts: ReconcileCounts = { created: 0, resolved: 0, reopened: 0, severityChanged: 0 };
  if (batch.violations.size === 0 && batch.passes.size === 0) return counts;
  // Read before the transaction: edges, for rules grouped by one, are all it needs.
  const groups = await groupsOf(db, scope, batch.violations);
  return db.transaction().execute(async (trx) => {
    // Lean: the columns a decision needs; reopened findings are read in full below for their events.
    const existing = (await trx
      .selectFrom('findings')
      .select(['id', 'status', 'severity', 'base_severity', 'rule_id', 'resource_id', 'group_id', 'group_cause'])
      .where('workspace_id', '=', scope.workspaceId)
      .where('resource_id', '=', sql<string>`ANY(${resourceIds}::text[])`)
      .where('rule_id', '=', sql<string>`ANY(${ruleIds}::text[])`)
      .execute()) as Existing[];
    const byId = new Map(existing.map((f) => [f.id, f]));
    const events: NewEvent[] = [];
    const inserts: Array<Record<string, unknown>> = [];
    const reopen: string[] = [];
    const touch: string[] = [];
    const resolve: Existing[] = [];
    const severityUpdates = new Map<string, string[]>();
    const regroup: Array<{ id: string; group_id: string; group_cause: string | null }> = [];

    for (const [id, { rule, node }] of batch.violations) {
      const found = byId.get(id);
      const group = groups.get(id)!;
      if (!found) {
        const row = {
          tenant_id: scope.tenantId,
          workspace_id: scope.workspaceId,
          id,
          rule_id: rule.id,
          framework: rule.framework,
          control_id: rule.control_id,
          framework_mappings: json(rule.framework_mappings),
          base_severity: rule.severity,
          severity: rule.severity,
          status: 'open' as const,
          title: rule.title,
          description: rule.description,
          remediation: rule.remediation.summary,
          resource_id: node.id,
          resource_type: node.type,
          resource_name: node.name,
          region: node.region,
          account_id: node.account_id ?? '',
          group_id: group.group_id,
          group_cause: group.group_cause,
          first_seen: now,
          last_seen: now,
          created_at: now,
          updated_at: now,
        };
        inserts.push(row);
        events.push(findingCreated(scope, { ...row, created_at: now }));
        continue;
      }
      if (found.status === 'resolved') {
        reopen.push(id);
      } else {
        touch.push(id);
      }
      if (found.group_id !== group.group_id || found.group_cause !== group.group_cause) regroup.push({ id, ...group });
      // A finding escalated for a known-exploited CVE keeps its escalation; otherwise it follows the rule.
      const escalated = found.severity !== found.base_severity;
      if (!escalated && found.severity !== rule.severity) {
        const ids = severityUpdates.get(rule.severity) ?? [];
        ids.push(id);
        severityUpdates.set(rule.severity, ids);
        events.push(severityChanged(scope, found, found.severity, rule.severity, 'rule_severity_changed'));
      }
    }
    for (const id of batch.passes) {
      const found = byId.get(id);
      if (found?.status === 'open') resolve.push(found);
    }

    const constants = {
      tenant_id: { type: 'uuid', value: scope.tenantId },
      workspace_id: { type: 'uuid', value: scope.workspaceId },
      status: { type: 'text', value: 'open' },
      first_seen: { type: 'timestamptz', value: now },
      last_seen: { type: 'timestamptz', value: now },
      created_at: { type: 'timestamptz', value: now },
      updated_at: { type: 'timestamptz', value: now },
    } as const;
    for (let i = 0; i < inserts.length; i += INSERT_CHUNK) {
      await unnestInsert(trx, { table: 'findings', columns: NEW_FINDING_COLUMNS, constants, rows: inserts.slice(i, i + INSERT_CHUNK) });
    }
    const scoped = () => trx.updateTable('findings').where('workspace_id', '=', scope.workspaceId);
    if (touch.length) await scoped().set({ last_seen: now }).where('id', '=', sql<string>`ANY(${touch}::text[])`).execute();
    if (reopen.length) {
      const reopened = await trx
        .selectFrom('findings')
        .select(EVENT_COLUMNS)
        .where('workspace_id', '=', scope.workspaceId)
        .where('id', '=', sql<string>`ANY(${reopen}::text[])`)
        .execute();
      for (const f of reopened) events.push(findingReopened(scope, f, now));
      await scoped()
        .set({ status: 'open', last_seen: now, updated_at: now, resolved_at: null, resolved_by: null })
        .where('id', '=', sql<string>`ANY(${reopen}::text[])`)
        .execute();
    }
    if (regroup.length) {
      await sql`
        UPDATE findings AS f SET group_id = v.group_id, group_cause = v.group_cause, updated_at = ${now}
        FROM unnest(${regroup.map((r) => r.id)}::text[], ${regroup.map((r) => r.group_id)}::text[], ${regroup.map((r) => r.group_cause)}::text[])
          AS v(id, group_id, group_cause)
        WHERE f.workspace_id = ${scope.workspaceId} AND f.id = v.id`.execute(trx);
    }
    for (const [severity, ids] of severityUpdates) {
      await scoped()
        .set({ severity: severity as FindingsTable['severity'], base_severity: severity as FindingsTable['severity'], updated_at: now })
        .where('id', '=', sql<string>`ANY(${ids}::text[])`)
        .execute();
    }
    if (resolve.length) {
      await scoped()
        .set({ status: 'resolved', resolved_at: now, resolved_by: 'audit', updated_at: now })
        .where('id', '=', sql<string>`ANY(${resolve.map((f) => f.id)}::text[])`)
        .execute();
      for (const f of resolve) events.push(findingResolved(scope, f, now, 'audit'));
    }
    await emitEvents(trx, { now: () => now }, events);
    counts.created = inserts.length;
    counts.reopened = reopen.length;
    counts.resolved = resolve.length;
    counts.severityChanged = [...severityUpdates.values()].reduce((n, ids) => n + ids.length, 0);
    return counts;
  });
}

/** Resolves open findings of the audited rules whose resource no longer exists (or changed type). */
export async function resolveVanished(db: Kysely<Database>, scope: Scope, now: Date, ruleIds: string[]): Promise<number> {
  if (ruleIds.length === 0) return 0;
  // An anti-join first, then an update by id: an UPDATE ... WHERE id IN (subquery with LIMIT) is
  // planned as a per-row subplan, quadratic in the number of findings.
  const vanished = await db
    .selectFrom('findings as g')
    .select(['g.id', 'g.rule_id', 'g.resource_id'])
    .where('g.workspace_id', '=', scope.workspaceId)
    .where('g.status', '=', 'open')
    .where('g.rule_id', '=', sql<string>`ANY(${ruleIds}::text[])`)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('nodes as n')
            .select('n.id')
            .where('n.workspace_id', '=', scope.workspaceId)
            .whereRef('n.id', '=', 'g.resource_id')
            .whereRef('n.type', '=', 'g.resource_type'),
        ),
      ),
    )
    .execute();
  for (let i = 0; i < vanished.length; i += 1000) {
    const chunk = vanished.slice(i, i + 1000);
    await db.transaction().execute(async (trx) => {
      const rows = await trx
        .updateTable('findings')
        .set({ status: 'resolved', resolved_at: now, resolved_by: 'audit', updated_at: now })
        .where('workspace_id', '=', scope.workspaceId)
        .where('status', '=', 'open')
        .where('id', '=', sql<string>`ANY(${chunk.map((f) => f.id)}::text[])`)
        .returning(['id', 'rule_id', 'resource_id'])
        .execute();
      await emitEvents(trx, { now: () => now }, rows.map((f) => findingResolved(scope, f, now, 'audit')));
    });
  }
  return vanished.length;
}
