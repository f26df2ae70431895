import { inWorkspace, inTenant } from '../../platform/db/scope.js';
import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { writeAudit, type AuditActor } from '../../platform/audit/audit-log.js';
import { formatPoamId, type PoamStatus } from './model.js';
import { appendComment } from './poam-repo.js';
import { findingStatus } from '../compliance/index.js';

/**
 * The automatic rule, driven by the compliance module's outbox events (that module is not ours, so we
 * follow its events instead of asking it to call us):
 *
 * - `finding.resolved` with `resolved_by: audit` (an audit no longer sees the violation): the items of
 *   that finding in open or in_progress move to **verification**, never to closed; closing stays a
 *   person's decision with evidence attached. A manual resolve (`resolved_by` a user) or a deleted
 *   rule proves nothing about the fix and moves nothing.
 * - `finding.reopened` (an audit sees the violation again): items of that finding in verification
 *   move back to **in_progress**: the verification failed.
 *
 * Each move is checked against the finding as it is now (a finding resolved and reopened again before
 * the follower ran moves nothing) and applies only to items created before the event. Every move adds
 * a comment to the item and an audit-log entry by the system actor `poam-finding-follower`.
 *
 * Reading the outbox: rows are read by `seq` after a stored position, but a transaction that took a
 * lower seq can commit after a later one, so the position only advances past events older than
 * `lookbackMs`; newer ones are read again on the next run, and receipts (per seq) make that harmless.
 * Lag: the schedule interval (30 s) plus the worker's pick-up; an event whose transaction commits
 * more than `lookbackMs` after writing it would be missed (audits write their events last, just
 * before committing).
 */
export const FOLLOWER_NAME = 'finding-events';
export const FOLLOWER_ACTOR: AuditActor = { type: 'system', id: null, name: 'poam-finding-follower' };
const TYPES = ['finding.resolved', 'finding.reopened'];

export interface FollowOptions {
  lookbackMs?: number;
  pageSize?: number;
  maxPages?: number;
}

export interface FollowResult {
  events: number;
  moved_to_verification: number;
  moved_to_in_progress: number;
}

interface EventRow {
  seq: number;
  tenant_id: string;
  workspace_id: string | null;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

export async function followFindingEvents(deps: Pick<AppDeps, 'database' | 'clock'>, options: FollowOptions = {}): Promise<FollowResult> {
  const lookbackMs = options.lookbackMs ?? 10 * 60_000;
  const pageSize = options.pageSize ?? 500;
  const maxPages = options.maxPages ?? 100;
  const result: FollowResult = { events: 0, moved_to_verification: 0, moved_to_in_progress: 0 };
  const db = deps.database.db;
  await db
    .insertInto('poam_follower')
    .values({ name: FOLLOWER_NAME, position: 0, updated_at: deps.clock.now() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();

  for (let page = 0; page < maxPages; page++) {
    const done = await db.transaction().execute(async (trx) => {
      // Locked for the page: concurrent runs (several workers) take turns.
      const { position } = await trx.selectFrom('poam_follower').select('position').where('name', '=', FOLLOWER_NAME).forUpdate().executeTakeFirstOrThrow();
      const events = (
        await sql<EventRow>`
          SELECT e.seq, e.tenant_id, e.workspace_id, e.type, e.data, e.created_at
          FROM outbox_events e
          WHERE e.seq > ${position} AND e.type IN (${sql.join(TYPES)})
            AND NOT EXISTS (SELECT 1 FROM poam_follower_receipts r WHERE r.seq = e.seq)
          ORDER BY e.seq
          LIMIT ${pageSize}`.execute(trx)
      ).rows;
      const now = deps.clock.now();
      for (const event of events) {
        const moved = await handle(trx, deps, event);
        if (event.type === 'finding.resolved') result.moved_to_verification += moved;
        else result.moved_to_in_progress += moved;
        await trx
          .insertInto('poam_follower_receipts')
          .values({ seq: Number(event.seq), handled_at: now })
          .execute();
      }
      result.events += events.length;
      if (events.length === pageSize) return false;
      // Everything visible after the position is handled: advance past what is old enough that no
      // transaction still open can add below it, and forget those receipts. Past events of every
      // type: stopping at the last resolved or reopened one left every later event (an audit's
      // 100,000 finding.created) to be scanned again by each run until another such event came.
      const cutoff = new Date(now.getTime() - lookbackMs);
      const safe = await sql<{ seq: number | null }>`
        SELECT max(seq) AS seq FROM outbox_events
        WHERE seq > ${position} AND created_at < ${cutoff}`.execute(trx);
      const next = safe.rows[0]?.seq;
      if (next !== null && next !== undefined) {
        await trx
          .updateTable('poam_follower')
          .set({ position: Number(next), updated_at: now })
          .where('name', '=', FOLLOWER_NAME)
          .execute();
        await trx.deleteFrom('poam_follower_receipts').where('seq', '<=', Number(next)).execute();
      }
      return true;
    });
    if (done) break;
  }
  return result;
}

function findingIdOf(event: EventRow): string | null {
  const data = event.data ?? {};
  if (typeof data.finding_id === 'string') return data.finding_id;
  const finding = data.finding as { id?: unknown } | undefined;
  return typeof finding?.id === 'string' ? finding.id : null;
}

/** Applies one event; returns how many items moved. */
async function handle(trx: Kysely<Database>, deps: Pick<AppDeps, 'clock'>, event: EventRow): Promise<number> {
  const findingId = findingIdOf(event);
  if (!findingId || !event.workspace_id) return 0;
  const resolved = event.type === 'finding.resolved';
  if (resolved && event.data.resolved_by !== 'audit') return 0;
  const status = await findingStatus(trx, { tenantId: event.tenant_id, workspaceId: event.workspace_id }, findingId);
  // The finding changed again since (or is gone): the later event, if any, decides.
  if (status !== (resolved ? 'resolved' : 'open')) return 0;
  const from: PoamStatus[] = resolved ? ['open', 'in_progress'] : ['verification'];
  const to: PoamStatus = resolved ? 'verification' : 'in_progress';
  const items = await trx
    .selectFrom('poam_items')
    .select(['number', 'status'])
    .where(inTenant(event.tenant_id))
    .where(inWorkspace({ workspaceId: event.workspace_id }))
    .where('finding_id', '=', findingId)
    .where('status', 'in', from)
    .where('created_at', '<=', event.created_at)
    .forUpdate()
    .execute();
  const now = deps.clock.now();
  for (const item of items) {
    await trx.updateTable('poam_items').set({ status: to, updated_at: now, closed_at: null }).where(inTenant(event.tenant_id)).where('number', '=', item.number).execute();
    const text = resolved
      ? `Linked finding ${findingId} was resolved by an audit (${String(event.data.resolved_at ?? new Date(event.created_at).toISOString())}): moved to verification. Closing needs evidence and a reviewer.`
      : `Linked finding ${findingId} was detected again by an audit (${String(event.data.reopened_at ?? new Date(event.created_at).toISOString())}): verification failed, moved back to in_progress.`;
    await appendComment(trx, event.tenant_id, item.number, { author: FOLLOWER_ACTOR.name, text, status_from: item.status, status_to: to, at: now });
    await writeAudit(trx, deps.clock, FOLLOWER_ACTOR, {
      tenantId: event.tenant_id,
      workspaceId: event.workspace_id,
      action: 'poam.status_changed',
      targetType: 'poam_item',
      targetId: formatPoamId(item.number),
      details: { from: item.status, to, automatic: true, finding_id: findingId, event_type: event.type, event_seq: Number(event.seq) },
    });
  }
  return items.length;
}
