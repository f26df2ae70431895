import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inWorkspace, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInScope, writeAudit, type AuditActor } from '../../platform/audit/audit-log.js';
import { emitEvents, type NewEvent } from '../../platform/events/outbox.js';
import { badRequest, conflict, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { acceptedAt } from './accepted.js';
import { groupLabel, scopedFindings } from '../compliance/index.js';
import { factsOf, present, unrevoked } from './acceptance-repo.js';
import { MAX_ACCEPTANCE_DAYS, stateOf, isOrphaned, type AcceptanceRow } from './acceptance-state.js';
import type { AcceptanceSnapshot } from './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

export interface AcceptanceInput {
  reason?: string;
  owner?: string;
  expires_at?: string;
}

interface Covered {
  id: string;
  resource_id: string;
  framework: string;
  control_id: string;
  framework_mappings: Array<{ framework: string; control_id: string }>;
  rule_id: string;
  title: string;
  account_id: string;
  region: string;
  group_cause: string | null;
}

/** The body rules of both accept endpoints (400 with a message naming the problem). */
function validate(input: AcceptanceInput, now: Date): { reason: string; owner: string; expiresAt: Date } {
  const reason = input.reason?.trim();
  const owner = input.owner?.trim();
  if (!reason) throw badRequest('reason is required');
  if (!owner) throw badRequest('owner is required');
  if (!input.expires_at) throw badRequest('expires_at is required');
  const expiresAt = new Date(input.expires_at);
  if (Number.isNaN(expiresAt.getTime())) throw badRequest('expires_at must be an ISO 8601 timestamp');
  if (expiresAt <= now) throw badRequest('expires_at must be in the future');
  if (expiresAt.getTime() > now.getTime() + MAX_ACCEPTANCE_DAYS * 86_400_000) {
    throw badRequest(`expires_at must be at most ${MAX_ACCEPTANCE_DAYS} days in the future`);
  }
  return { reason, owner, expiresAt };
}

function snapshotOf(findings: Covered[]): AcceptanceSnapshot {
  const controls = new Set<string>();
  for (const f of findings) {
    controls.add(`${f.framework}:${f.control_id}`);
    for (const m of f.framework_mappings) controls.add(`${m.framework}:${m.control_id}`);
  }
  return {
    finding_ids: findings.map((f) => f.id).sort(),
    resource_ids: [...new Set(findings.map((f) => f.resource_id))].sort(),
    controls: [...controls].sort(),
  };
}

const coveredColumns = ['id', 'resource_id', 'framework', 'control_id', 'framework_mappings', 'rule_id', 'title', 'account_id', 'region', 'group_cause'] as const;

/** Findings among `ids` that are open and no live acceptance covers any more (they become active again). */
async function nowUncovered(trx: Kysely<Database>, scope: Scope, ids: string[], now: Date): Promise<Array<{ id: string }>> {
  if (ids.length === 0) return [];
  return scopedFindings(trx, scope)
    .select('f.id')
    .where('f.id', '=', sql<string>`ANY(${ids}::text[])`)
    .where('f.status', '=', 'open')
    .where(sql<boolean>`NOT ${acceptedAt('f', now)}`)
    .execute();
}

/** Ends an acceptance's coverage: events for the findings it leaves active again. */
export function endedEvents(scope: Scope, acceptanceId: string, findings: Array<{ id: string }>, reason: 'revoked' | 'expired', at: Date): NewEvent[] {
  return findings.map((f) => ({
    tenantId: scope.tenantId,
    workspaceId: scope.workspaceId,
    type: 'finding.risk_acceptance_ended',
    data: { finding_id: f.id, acceptance_id: acceptanceId, reason, ended_at: at.toISOString() },
  }));
}

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createAcceptanceService(deps: Deps) {
  const db = deps.database.db;

  async function create(
    trx: Kysely<Database>,
    context: RequestContext,
    kind: 'finding' | 'group',
    covered: Covered[],
    body: { reason: string; owner: string; expiresAt: Date },
    groupId: string,
  ): Promise<AcceptanceRow> {
    const { scope } = context;
    const now = deps.clock.now();
    const first = covered[0]!;
    const label = groupLabel(first, new Set(covered.map((c) => c.resource_id)).size);
    const snapshot = snapshotOf(covered);
    const row = await trx
      .insertInto('risk_acceptances')
      .values({
        id: randomUUID(),
        tenant_id: scope.tenantId,
        workspace_id: scope.workspaceId,
        scope: kind,
        finding_id: kind === 'finding' ? first.id : null,
        group_id: groupId,
        group_label: label,
        owner: body.owner,
        reason: body.reason,
        expires_at: body.expiresAt,
        snapshot: json(snapshot),
        created_by: `${context.actor.type}:${context.actor.id}`,
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    for (let i = 0; i < covered.length; i += 1000) {
      await trx
        .insertInto('risk_acceptance_findings')
        .values(covered.slice(i, i + 1000).map((f) => ({ acceptance_id: row.id, workspace_id: scope.workspaceId, finding_id: f.id })))
        .execute();
    }
    await emitEvents(
      trx,
      deps.clock,
      covered.map((f) => ({
        tenantId: scope.tenantId,
        workspaceId: scope.workspaceId,
        type: 'finding.risk_accepted',
        data: {
          finding_id: f.id,
          acceptance_id: row.id,
          scope: kind,
          group_id: groupId,
          owner: body.owner,
          reason: body.reason,
          expires_at: body.expiresAt.toISOString(),
        },
      })),
    );
    await auditInScope(trx, deps.clock, context, {
      action: 'risk.accepted',
      targetType: kind === 'finding' ? 'finding' : 'finding_group',
      targetId: kind === 'finding' ? first.id : groupId,
      details: { acceptance_id: row.id, owner: body.owner, reason: body.reason, expires_at: body.expiresAt.toISOString(), findings: covered.length },
    });
    return row;
  }

  async function presentOne(scope: Scope, row: AcceptanceRow) {
    const facts = await factsOf(db, scope, [row]);
    return present(row, deps.clock.now(), facts.get(row.id)!);
  }

  /** Serialises acceptance changes of one finding or group (a live acceptance cannot be indexed). */
  const lock = (trx: Kysely<Database>, scope: Scope, key: string) => sql`SELECT pg_advisory_xact_lock(hashtext(${`${scope.workspaceId}:${key}`}))`.execute(trx);

  return {
    async acceptFinding(context: RequestContext, findingId: string, input: AcceptanceInput) {
      const { scope } = context;
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        await lock(trx, scope, `finding:${findingId}`);
        const finding = await scopedFindings(trx, scope)
          .select([...coveredColumns.map((c) => `f.${c}` as const), 'f.status', 'f.group_id', acceptedAt('f', now).as('accepted')])
          .where('f.id', '=', findingId)
          .executeTakeFirst();
        if (!finding) throw notFound('finding not found');
        const body = validate(input, now);
        if (finding.status !== 'open') throw badRequest(`finding is not active (${finding.status}): resolved findings cannot be accepted`);
        if (finding.accepted) {
          const single = await unrevoked(trx, scope, 'finding', findingId);
          const live = single && new Date(single.expires_at) > now;
          throw conflict(live ? 'finding is already accepted' : 'finding is already accepted through its group');
        }
        return create(trx, context, 'finding', [finding], body, finding.group_id);
      });
      return presentOne(scope, row);
    },

    async acceptGroup(context: RequestContext, groupId: string, input: AcceptanceInput) {
      const { scope } = context;
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        await lock(trx, scope, `group:${groupId}`);
        const rows = await scopedFindings(trx, scope)
          .select([...coveredColumns.map((c) => `f.${c}` as const), acceptedAt('f', now).as('accepted')])
          .where('f.group_id', '=', groupId)
          .where('f.status', '=', 'open')
          .orderBy('f.id')
          .execute();
        if (rows.length === 0) throw notFound('finding group not found or has no open findings');
        const body = validate(input, now);
        const existing = await unrevoked(trx, scope, 'group', groupId);
        if (existing && new Date(existing.expires_at) > now) throw conflict('the group already has a live acceptance');
        // The spec's "already-accepted group": every open finding is covered by single acceptances.
        if (rows.every((r) => r.accepted)) throw notFound('finding group is already accepted: every open finding has a live acceptance');
        const findings = rows.map(({ accepted: _accepted, ...finding }) => finding);
        return create(trx, context, 'group', findings, body, groupId);
      });
      return presentOne(scope, row);
    },

    /** Revokes the unrevoked acceptance of that scope; the other scope's acceptances are untouched. */
    async revoke(context: RequestContext, kind: 'finding' | 'group', key: string) {
      const { scope } = context;
      const now = deps.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        await lock(trx, scope, `${kind}:${key}`);
        const current = await unrevoked(trx, scope, kind, key);
        if (!current) throw notFound(`no unrevoked ${kind === 'finding' ? 'finding' : 'group'} acceptance exists`);
        const revoked = await trx
          .updateTable('risk_acceptances')
          .set({ revoked_at: now, revoked_by: `${context.actor.type}:${context.actor.id}` })
          .where('id', '=', current.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        // Only a live acceptance was covering anything; an expired one ended already.
        if (new Date(current.expires_at) > now) {
          const reopened = await nowUncovered(trx, scope, current.snapshot.finding_ids, now);
          await emitEvents(trx, deps.clock, endedEvents(scope, current.id, reopened, 'revoked', now));
        }
        await auditInScope(trx, deps.clock, context, {
          action: 'risk.revoked',
          targetType: kind === 'finding' ? 'finding' : 'finding_group',
          targetId: key,
          details: { acceptance_id: current.id },
        });
        return revoked;
      });
      return presentOne(scope, row);
    },

    async get(scope: Scope, id: string) {
      const row = await db.selectFrom('risk_acceptances').selectAll().where(inWorkspace(scope)).where('id', '=', id).executeTakeFirst();
      if (!row) throw notFound('risk acceptance not found');
      return presentOne(scope, row);
    },

    /**
     * Newest first, paged, with counts over the whole workspace. State and orphaned status depend on
     * the findings now, so they are computed for every acceptance of the workspace (acceptances are
     * few compared to findings).
     */
    async list(scope: Scope, filter: { state?: string; scope?: 'finding' | 'group'; owner?: string }, page: PageRequest) {
      const now = deps.clock.now();
      const rows = await db.selectFrom('risk_acceptances').selectAll().where(inWorkspace(scope)).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
      const facts = await factsOf(db, scope, rows);
      const all = rows.map((r) => present(r, now, facts.get(r.id)!));
      const counts = {
        total: all.length,
        active: all.filter((a) => a.state === 'active' || a.state === 'partial').length,
        expired: all.filter((a) => a.state === 'expired').length,
        revoked: all.filter((a) => a.state === 'revoked').length,
        orphaned: all.filter((a) => a.orphaned).length,
      };
      const selected = all.filter(
        (a) =>
          (!filter.scope || a.scope === filter.scope) &&
          (!filter.owner || a.owner === filter.owner) &&
          (!filter.state || (filter.state === 'orphaned' ? a.orphaned : filter.state === 'active' ? a.state === 'active' || a.state === 'partial' : a.state === filter.state)),
      );
      const start = offsetOf(page);
      // `total` is the filtered total of the page envelope; the workspace-wide total is counts.total.
      const { total: _all, ...stateCounts } = counts;
      void _all;
      return { ...toPage(selected.slice(start, start + page.perPage), selected.length, page), ...stateCounts, counts };
    },
  };
}

/**
 * Records expiries: the state is already `expired` from the moment expires_at passes (computed on
 * read); this records the transition once (audit log, finding.risk_acceptance_ended events for the
 * findings active again).
 */
export async function sweepExpired(deps: Deps, limit = 500): Promise<number> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const due = await db
    .selectFrom('risk_acceptances')
    .selectAll()
    .where('revoked_at', 'is', null)
    .where('expiry_recorded_at', 'is', null)
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  const system: AuditActor = { type: 'system', id: null, name: 'risk-expiry-sweeper' };
  for (const row of due) {
    await db.transaction().execute(async (trx) => {
      const claimed = await trx
        .updateTable('risk_acceptances')
        .set({ expiry_recorded_at: now })
        .where('id', '=', row.id)
        .where('expiry_recorded_at', 'is', null)
        .where('revoked_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      if (!claimed) return;
      const scope = { tenantId: row.tenant_id, workspaceId: row.workspace_id };
      const reopened = await nowUncovered(trx, scope, row.snapshot.finding_ids, now);
      await emitEvents(trx, deps.clock, endedEvents(scope, row.id, reopened, 'expired', new Date(row.expires_at)));
      await writeAudit(trx, deps.clock, system, {
        tenantId: row.tenant_id,
        workspaceId: row.workspace_id,
        action: 'risk.expired',
        targetType: row.scope === 'finding' ? 'finding' : 'finding_group',
        targetId: row.finding_id ?? row.group_id,
        details: { acceptance_id: row.id, expires_at: new Date(row.expires_at).toISOString(), findings_active_again: reopened.length },
      });
    });
  }
  return due.length;
}

export { stateOf, isOrphaned };
