import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { SeqGaps } from '../../platform/events/seq-gaps.js';
import { JOBS_CHANNEL } from '../../platform/jobs/queue.js';
import type { IntegrationConfig } from './config.js';
import { factsOf, findingIdOf, matches, needsLookup, type Candidate, type EventFacts } from './matching.js';
import { findingAlertFacts } from '../compliance/index.js';
import './tables.js';

/**
 * The dispatcher follows the outbox and turns each event into one delivery per matching integration,
 * each with a queue job for its first attempt.
 *
 * Exactly once: one row (integration_dispatch_state) holds the position; a dispatch locks it FOR
 * UPDATE, reads the next page, writes the deliveries and jobs and moves the position in one
 * transaction. Any number of workers may run dispatch jobs: they take turns on the row, and a crash
 * rolls the whole page back. The unique (integration, event) key of deliveries backs this up.
 *
 * Order and gaps: outbox seqs are taken at insert and transactions commit in any order, so rows can
 * appear below the position after it moved past them. As the SSE hub does, the dispatcher remembers the
 * seqs it skipped (SeqGaps, persisted with the position) and reads them again until they appear or
 * are older than `gapRetentionMs` (a rolled-back transaction leaves a hole forever).
 *
 * Wake-ups: a trigger on outbox_events queues a dispatch job in the writing transaction (see
 * migration 0006), and a schedule runs one every few seconds as a safety net. A writer whose trigger
 * saw a dispatch job queued relies on that job; if the job was claimed before the writer committed,
 * its read could miss the writer's events. Writers hold a shared advisory lock until they commit, so
 * a dispatch that finds the lock taken (writers in flight) queues a follow-up run shortly after.
 */
export const DISPATCH_JOB = 'integrations.dispatch';
export const DELIVER_JOB = 'integrations.deliver';
/** The advisory lock key the outbox trigger takes shared (migration 0006). */
export const WRITERS_LOCK = 727_007;

export interface DispatchOptions {
  pageSize?: number;
  gapRetentionMs?: number;
  maxGapRanges?: number;
  followUpMs?: number;
  /** Delay of the first attempt (the retry schedule's first entry), seconds. */
  firstDelaySeconds: number;
}

export interface DispatchDeps {
  db: Kysely<Database>;
  clock: Clock;
  log: Logger;
}

export interface DispatchResult {
  events: number;
  deliveries: number;
  pages: number;
}

interface OutboxRow {
  seq: string | number;
  id: string;
  tenant_id: string;
  workspace_id: string | null;
  type: string;
  created_at: Date | string;
  data: Record<string, unknown> | null;
}

export async function dispatch(deps: DispatchDeps, options: DispatchOptions, signal?: AbortSignal): Promise<DispatchResult> {
  const result: DispatchResult = { events: 0, deliveries: 0, pages: 0 };
  for (;;) {
    const page = await dispatchPage(deps, options);
    result.events += page.events;
    result.deliveries += page.deliveries;
    result.pages++;
    if (!page.full || signal?.aborted) return result;
  }
}

async function dispatchPage(deps: DispatchDeps, options: DispatchOptions): Promise<{ events: number; deliveries: number; full: boolean }> {
  const pageSize = options.pageSize ?? 1_000;
  const retention = options.gapRetentionMs ?? 60 * 60_000;
  return deps.db.transaction().execute(async (trx) => {
    const state = await trx.selectFrom('integration_dispatch_state').selectAll().where('id', '=', 1).forUpdate().executeTakeFirst();
    if (!state) throw new Error('integration_dispatch_state is missing its row (migration 0006)');
    // Probe, then read: writers that committed before the read are seen; those still holding the
    // lock may be missed and get a follow-up run.
    const probe = await sql<{ got: boolean }>`SELECT pg_try_advisory_lock(${WRITERS_LOCK}) AS got`.execute(trx);
    const writersInFlight = !probe.rows[0]?.got;
    if (!writersInFlight) await sql`SELECT pg_advisory_unlock(${WRITERS_LOCK})`.execute(trx);

    const now = deps.clock.now();
    const gaps = new SeqGaps(options.maxGapRanges ?? 10_000);
    for (const g of state.gaps) gaps.add(g.from, g.to, g.since);
    const expired = gaps.expire(now.getTime() - retention);
    if (expired) deps.log.warn({ ranges: expired }, 'outbox seq holes given up by the integrations dispatcher');
    let cursor = Number(state.cursor);
    const startCursor = cursor;
    const startGaps = JSON.stringify(gaps.ranges);

    const lows = gaps.ranges.map((g) => g.from);
    const highs = gaps.ranges.map((g) => g.to);
    // Payloads only of events some active integration of the tenant subscribes to.
    const { rows } = await sql<OutboxRow>`
      WITH page AS (
        SELECT seq FROM outbox_events WHERE seq > ${cursor}
        UNION ALL
        SELECT o.seq FROM unnest(${lows}::bigint[], ${highs}::bigint[]) AS g(lo, hi)
        JOIN outbox_events o ON o.seq BETWEEN g.lo AND g.hi
        ORDER BY seq
        LIMIT ${pageSize}
      )
      SELECT o.seq, o.id, o.tenant_id, o.workspace_id, o.type, o.created_at,
        CASE WHEN EXISTS (
          SELECT 1 FROM integrations i WHERE i.tenant_id = o.tenant_id AND i.status = 'active' AND o.type = ANY(i.events)
        ) THEN o.data END AS data
      FROM page JOIN outbox_events o ON o.seq = page.seq
      ORDER BY o.seq`.execute(trx);

    for (const row of rows) {
      const seq = Number(row.seq);
      if (seq <= cursor) {
        gaps.fill(seq);
      } else {
        const dropped = gaps.add(cursor + 1, seq - 1, now.getTime());
        if (dropped) deps.log.warn({ ranges: dropped }, 'too many outbox seq holes: the oldest are given up');
        cursor = seq;
      }
    }

    const wanted = rows.filter((r) => r.data !== null);
    let created = 0;
    if (wanted.length) created = await createDeliveries(trx, deps, options, wanted, now);

    if (cursor !== startCursor || JSON.stringify(gaps.ranges) !== startGaps) {
      await trx
        .updateTable('integration_dispatch_state')
        .set({ cursor: String(cursor), gaps: json(gaps.ranges), updated_at: now })
        .where('id', '=', 1)
        .execute();
    }
    const full = rows.length === pageSize;
    if (writersInFlight && !full) await queueFollowUp(trx, new Date(now.getTime() + (options.followUpMs ?? 200)));
    return { events: rows.length, deliveries: created, full };
  });
}

async function queueFollowUp(trx: Kysely<Database>, runAt: Date): Promise<void> {
  await sql`
    INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, created_at)
    SELECT ${randomUUID()}, ${DISPATCH_JOB}, '{}'::jsonb, 'queued', 0, 3, ${runAt}, ${runAt}
    WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE kind = ${DISPATCH_JOB} AND status = 'queued')`.execute(trx);
}

async function createDeliveries(trx: Kysely<Database>, deps: DispatchDeps, options: DispatchOptions, rows: OutboxRow[], now: Date): Promise<number> {
  const tenants = [...new Set(rows.map((r) => r.tenant_id))];
  const integrations = await trx
    .selectFrom('integrations')
    .select(['id', 'tenant_id', 'events', 'config', 'enabled_at'])
    .where('status', '=', 'active')
    .where('tenant_id', 'in', tenants)
    .execute();
  const byTenant = new Map<string, Candidate[]>();
  for (const i of integrations) {
    const config = i.config as IntegrationConfig;
    const workspaces = Array.isArray(config.workspaces) && config.workspaces.length ? new Set(config.workspaces as string[]) : null;
    const candidate: Candidate = {
      id: i.id,
      tenantId: i.tenant_id,
      events: new Set(i.events),
      enabledAt: new Date(i.enabled_at).getTime(),
      workspaces,
      filters: (config.filters ?? {}) as Candidate['filters'],
    };
    const list = byTenant.get(i.tenant_id) ?? [];
    list.push(candidate);
    byTenant.set(i.tenant_id, list);
  }

  // Facts of each event; finding events without them get the finding's, when a filter needs them.
  const facts = new Map<OutboxRow, EventFacts>();
  const lookups: OutboxRow[] = [];
  for (const row of rows) {
    const own = factsOf(row.data!);
    facts.set(row, own);
    const candidates = (byTenant.get(row.tenant_id) ?? []).filter((c) => c.events.has(row.type));
    if (row.workspace_id && findingIdOf(row.data!) && candidates.some((c) => needsLookup(c, own))) lookups.push(row);
  }
  if (lookups.length) {
    const found = await findingAlertFacts(
      trx,
      lookups.map((r) => ({ workspaceId: r.workspace_id!, id: findingIdOf(r.data!)! })),
    );
    const index = new Map(found.map((f) => [`${f.workspace_id}\0${f.id}`, f]));
    for (const row of lookups) {
      const finding = index.get(`${row.workspace_id}\0${findingIdOf(row.data!)}`);
      if (!finding) continue;
      const own = facts.get(row)!;
      facts.set(row, { severity: own.severity ?? finding.severity, framework: own.framework ?? finding.framework, resource_type: own.resource_type ?? finding.resource_type });
    }
  }

  const firstRun = new Date(now.getTime() + options.firstDelaySeconds * 1000);
  const deliveries: Array<Record<string, unknown> & { id: string; job_id: string }> = [];
  for (const row of rows) {
    const createdAt = new Date(row.created_at);
    const event = { type: row.type, workspaceId: row.workspace_id, createdAt: createdAt.getTime(), data: row.data! };
    let envelope: string | null = null;
    for (const candidate of byTenant.get(row.tenant_id) ?? []) {
      if (!matches(candidate, event, facts.get(row)!)) continue;
      envelope ??= JSON.stringify({
        id: row.id,
        type: row.type,
        tenant_id: row.tenant_id,
        workspace_id: row.workspace_id,
        timestamp: createdAt.toISOString(),
        data: row.data,
      });
      deliveries.push({
        id: randomUUID(),
        integration_id: candidate.id,
        tenant_id: row.tenant_id,
        workspace_id: row.workspace_id,
        event_id: row.id,
        event_seq: String(row.seq),
        event_type: row.type,
        envelope,
        status: 'pending',
        attempts: 0,
        round_attempts: 0,
        next_attempt_at: firstRun,
        job_id: randomUUID(),
        created_at: now,
        updated_at: now,
      });
    }
  }
  let created = 0;
  for (let i = 0; i < deliveries.length; i += 500) {
    const chunk = deliveries.slice(i, i + 500);
    const inserted = await trx
      .insertInto('integration_deliveries')
      .values(chunk as never)
      .onConflict((oc) => oc.columns(['integration_id', 'event_id']).doNothing())
      .returning(['id', 'job_id'])
      .execute();
    if (inserted.length === 0) continue;
    await trx
      .insertInto('jobs')
      .values(
        inserted.map((d) => ({
          id: d.job_id!,
          kind: DELIVER_JOB,
          payload: json({ delivery_id: d.id }),
          status: 'queued' as const,
          attempts: 0,
          max_attempts: DELIVER_JOB_ATTEMPTS,
          run_at: firstRun,
          created_at: now,
        })),
      )
      .execute();
    created += inserted.length;
  }
  if (created) await sql`SELECT pg_notify(${JOBS_CHANNEL}, ${DELIVER_JOB})`.execute(trx);
  if (created < deliveries.length) deps.log.warn({ duplicates: deliveries.length - created }, 'deliveries that already existed were not created again');
  return created;
}

/**
 * Runs of one delivery attempt's job: a worker that dies mid-request leaves the job to be taken over
 * (the same attempt is sent again, with the same idempotency id) up to this many times.
 */
export const DELIVER_JOB_ATTEMPTS = 3;
