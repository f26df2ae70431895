import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, workspaceIs, type Scope } from '../../../platform/db/scope.js';
import { emitEvents, type NewEvent } from '../../../platform/events/outbox.js';
import type { FindingsTable } from '../tables.js';
import { insertNewFindings, type NewFinding } from './insert-findings.js';
import { groupsOf } from '../findings/grouping.js';
import type { BatchResult } from './evaluate.js';
import { findingReopened, findingResolved, reopening, severityChanged } from '../findings/finding-events.js';
import { recordBatchUnknowns } from './record-unknowns.js';
import { forgetAuditState, recordAuditState } from './incremental.js';
import type { ReadNode } from './node-pages.js';
import { checkedRules, markChecked } from './vanished.js';
import { nodeExistsInWorkspace } from '../../graph/index.js';

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
  'id',
  'rule_id',
  'resource_id',
  'created_at',
  'framework',
  'control_id',
  'severity',
  'title',
  'description',
  'resource_type',
  'resource_name',
  'region',
  'remediation',
] as const;

/** Where a batch's unknown evaluations are recorded (record-unknowns.ts). */
export interface UnknownRecording {
  runId: string | null;
  /** The workspace had unknown rows of the audited rules when the audit began. */
  prior: boolean;
}

/** The batch's nodes as read and the rule-set versions they were evaluated under: their audit records (incremental.ts). */
export interface AuditStateRecording {
  nodes: ReadNode[];
  versions: Map<string, string>;
}

/**
 * Brings the findings of one evaluated batch in line with what the audit saw, in one short
 * transaction with its events: new violations create findings, violations of resolved findings
 * reopen them, clean evaluations resolve open ones, and a changed rule severity is applied. Every
 * violation gets its root-cause group again, so a finding whose cause changed (or whose rule now
 * names a cause) moves to the group of its cause. An unknown evaluation leaves its finding as it
 * was and is recorded in evaluation_unknowns, in the same transaction.
 */
export async function reconcileBatch(
  db: Kysely<Database>,
  scope: Scope,
  now: Date,
  batch: BatchResult,
  resourceIds: string[],
  ruleIds: string[],
  unknowns: UnknownRecording = { runId: null, prior: true },
  state?: AuditStateRecording,
): Promise<ReconcileCounts> {
  const counts: ReconcileCounts = { created: 0, resolved: 0, reopened: 0, severityChanged: 0 };
  if (batch.violations.size === 0 && batch.passes.size === 0 && batch.unknowns.size === 0) {
    if (state?.nodes.length) await db.transaction().execute((trx) => recordAuditState(trx, scope, state.nodes, state.versions, batch));
    return counts;
  }
  // Read before the transaction: edges, for rules grouped by one, are all it needs.
  const groups = await groupsOf(db, scope, batch.violations);
  return db.transaction().execute(async (trx) => {
    const existing = await existingFindings(trx, scope, resourceIds, ruleIds);
    const byId = new Map(existing.map((f) => [f.id, f]));
    const events: NewEvent[] = [];
    const inserts: NewFinding[] = [];
    const reopen: string[] = [];
    const touch: string[] = [];
    const resolve: Existing[] = [];
    const severityUpdates = new Map<string, string[]>();
    const regroup: Array<{ id: string; group_id: string; group_cause: string | null }> = [];

    for (const [id, { rule, node }] of batch.violations) {
      const found = byId.get(id);
      const group = groups.get(id)!;
      if (!found) {
        inserts.push({ id, rule, node, group });
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

    await insertNewFindings(trx, scope, now, inserts);
    const scoped = () => trx.updateTable('finding_rows').where(inWorkspace(scope));
    if (touch.length)
      await scoped()
        .set({ last_seen: now })
        .where('id', '=', sql<string>`ANY(${touch}::text[])`)
        .execute();
    if (reopen.length) {
      const reopened = await trx
        .selectFrom('findings')
        .select(EVENT_COLUMNS)
        .where(inWorkspace(scope))
        .where('id', '=', sql<string>`ANY(${reopen}::text[])`)
        .execute();
      for (const f of reopened) events.push(findingReopened(scope, f, now));
      await scoped()
        .set({ status: 'open', last_seen: now, updated_at: now, resolved_at: null, resolved_by: null, ...reopening(now) })
        .where('id', '=', sql<string>`ANY(${reopen}::text[])`)
        .execute();
    }
    if (regroup.length) {
      await sql`
        UPDATE finding_rows AS f SET group_id = v.group_id, group_cause = v.group_cause, updated_at = ${now}
        FROM unnest(${regroup.map((r) => r.id)}::text[], ${regroup.map((r) => r.group_id)}::text[], ${regroup.map((r) => r.group_cause)}::text[])
          AS v(id, group_id, group_cause)
        WHERE ${workspaceIs(scope, 'f')} AND f.id = v.id`.execute(trx);
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
    await recordBatchUnknowns(trx, scope, now, unknowns.runId, batch.unknowns, resourceIds, ruleIds, unknowns.prior);
    // The nodes' records go with the findings they describe, in the same transaction.
    if (state) await recordAuditState(trx, scope, state.nodes, state.versions, batch);
    await emitEvents(trx, { now: () => now }, events);
    counts.created = inserts.length;
    counts.reopened = reopen.length;
    counts.resolved = resolve.length;
    counts.severityChanged = [...severityUpdates.values()].reduce((n, ids) => n + ids.length, 0);
    return counts;
  });
}

/**
 * The findings of the batch's resources under the audited rules, with the columns a decision needs
 * (reopened findings are read in full later for their events). One index probe per resource: a
 * first audit fills the table while nothing has analyzed it, and with `resource_id = ANY(...)` the
 * planner then scanned every finding of the workspace for each batch (quadratic: 10 of a 24 s audit
 * of 100,000 nodes). OFFSET 0 keeps the lateral subquery from being flattened into a join the
 * planner could choose to hash.
 */
async function existingFindings(trx: Kysely<Database>, scope: Scope, resourceIds: string[], ruleIds: string[]): Promise<Existing[]> {
  const { rows } = await sql<Existing>`
    SELECT f.id, f.status, f.severity, f.base_severity, f.rule_id, f.resource_id, f.group_id, f.group_cause
    FROM unnest(${resourceIds}::text[]) AS r(id)
    CROSS JOIN LATERAL (
      SELECT id, status, severity, base_severity, rule_id, resource_id, group_id, group_cause
      FROM findings
      WHERE ${workspaceIs(scope)} AND resource_id = r.id AND rule_id = ANY(${ruleIds}::text[])
      OFFSET 0
    ) AS f`.execute(trx);
  return rows;
}

/** When the audit saw findings: it started at `since`, and each batch stamped last_seen with one of `at`. */
export interface AuditSightings {
  since: Date;
  at: Date[];
}

/**
 * Resolves open findings of the audited rules whose resource no longer exists (or changed type).
 * For a rule whose findings no audit of the workspace has checked in full yet (vanished.ts): every
 * open finding whose resource the audit read was either seen (last_seen stamped with its batch's
 * time) or resolved; only the rest (vanished resources, evaluation errors, which leave a finding as
 * it was, and resources skipped as unchanged) are checked against the nodes, instead of every
 * finding. A finding counts as seen only when its last_seen is both after the start and one of the
 * batch times, so neither a frozen clock nor another worker's clock running ahead can spare a
 * vanished one. For a rule checked in full before, only the findings of the resources deleted or
 * retyped since (audit_removed_nodes) are checked: the resources the audit skipped as unchanged are
 * not read at all.
 */
export async function resolveVanished(db: Kysely<Database>, scope: Scope, now: Date, ruleIds: string[], seen: AuditSightings): Promise<number> {
  if (ruleIds.length === 0) return 0;
  const checked = await checkedRules(db, scope, ruleIds);
  const unchecked = ruleIds.filter((id) => !checked.has(id));
  const gone = (eb: ExpressionBuilder<Database & { g: Database['findings'] }, 'g'>) => eb.not(nodeExistsInWorkspace(scope, 'g.resource_id', 'g.resource_type'));
  // An anti-join first, then an update by id: an UPDATE ... WHERE id IN (subquery with LIMIT) is
  // planned as a per-row subplan, quadratic in the number of findings.
  const vanished = [
    ...(unchecked.length === 0
      ? []
      : await db
          .selectFrom('findings as g')
          .select(['g.id', 'g.rule_id', 'g.resource_id'])
          .where(inWorkspace(scope, 'g'))
          .where('g.status', '=', 'open')
          .where('g.rule_id', '=', sql<string>`ANY(${unchecked}::text[])`)
          .where((eb) => eb.or([eb('g.last_seen', '<=', seen.since), sql<boolean>`NOT (g.last_seen = ANY(${seen.at}::timestamptz[]))`]))
          .where(gone)
          .execute()),
    ...(checked.size === 0
      ? []
      : await db
          .selectFrom('audit_removed_nodes as r')
          .innerJoin('findings as g', (join) => join.onRef('g.workspace_id', '=', 'r.workspace_id').onRef('g.resource_id', '=', 'r.node_id'))
          .select(['g.id', 'g.rule_id', 'g.resource_id'])
          .where(inWorkspace(scope, 'r'))
          .where('g.status', '=', 'open')
          .where('g.rule_id', '=', sql<string>`ANY(${[...checked]}::text[])`)
          .where(gone)
          .execute()),
  ];
  for (let i = 0; i < vanished.length; i += 1000) {
    const chunk = vanished.slice(i, i + 1000);
    await db.transaction().execute(async (trx) => {
      const rows = await trx
        .updateTable('finding_rows')
        .set({ status: 'resolved', resolved_at: now, resolved_by: 'audit', updated_at: now })
        .where(inWorkspace(scope))
        .where('status', '=', 'open')
        .where('id', '=', sql<string>`ANY(${chunk.map((f) => f.id)}::text[])`)
        .returning(['id', 'rule_id', 'resource_id'])
        .execute();
      await emitEvents(
        trx,
        { now: () => now },
        rows.map((f) => findingResolved(scope, f, now, 'audit')),
      );
      // A node recreated later with the same content is evaluated again, not skipped over resolved findings.
      await forgetAuditState(
        trx,
        scope.workspaceId,
        chunk.map((f) => f.resource_id),
      );
    });
  }
  // Every open finding of these rules has now been checked against the nodes (or its resource was
  // logged as removed after this audit read it): from now on the log is enough for them.
  await markChecked(db, scope, unchecked);
  return vanished.length;
}
