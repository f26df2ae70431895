import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import { json } from '../db/schema.js';
import type { Clock } from '../clock.js';

export type JobRow = Selectable<Database['jobs']>;

/** The channel workers LISTEN on; enqueue notifies it inside the caller's transaction. */
export const JOBS_CHANNEL = 'cg_jobs';

export interface EnqueueInput {
  kind: string;
  payload?: Record<string, unknown>;
  tenantId?: string | null;
  workspaceId?: string | null;
  runAt?: Date;
  maxAttempts?: number;
  /** At most one queued or running job per (kind, dedupeKey); a second enqueue returns the live one. */
  dedupeKey?: string | null;
  id?: string;
}

export interface EnqueueResult {
  id: string;
  deduplicated: boolean;
}

/**
 * Adds a job. Pass the caller's transaction as `executor` so the job exists only if the change that
 * asked for it commits ("side effects are rows in the same transaction").
 */
export async function enqueueJob(executor: Kysely<Database>, clock: Clock, input: EnqueueInput): Promise<EnqueueResult> {
  const now = clock.now();
  const id = input.id ?? randomUUID();
  const dedupeKey = input.dedupeKey ?? null;
  const values = {
    id,
    kind: input.kind,
    payload: json(input.payload ?? {}),
    tenant_id: input.tenantId ?? null,
    workspace_id: input.workspaceId ?? null,
    status: 'queued' as const,
    attempts: 0,
    max_attempts: input.maxAttempts ?? 3,
    run_at: input.runAt ?? now,
    dedupe_key: dedupeKey,
    created_at: now,
  };
  if (dedupeKey === null) {
    await executor.insertInto('jobs').values(values).execute();
  } else {
    const inserted = await executor
      .insertInto('jobs')
      .values(values)
      .onConflict((oc) => oc.columns(['kind', 'dedupe_key']).where('dedupe_key', 'is not', null).where('status', 'in', ['queued', 'running']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) {
      const live = await executor
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', input.kind)
        .where('dedupe_key', '=', dedupeKey)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirst();
      if (live) return { id: live.id, deduplicated: true };
      // The live job finished between the two statements: enqueue afresh.
      return enqueueJob(executor, clock, input);
    }
  }
  await sql`SELECT pg_notify(${JOBS_CHANNEL}, ${input.kind})`.execute(executor);
  return { id, deduplicated: false };
}

export async function getJob(db: Kysely<Database>, id: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Cancels a queued or running job. A running job's worker notices at its next heartbeat (its lease
 * token no longer matches a running row) and aborts the handler's signal.
 */
export async function cancelJob(db: Kysely<Database>, clock: Clock, id: string): Promise<JobRow | undefined> {
  return db
    .updateTable('jobs')
    .set({ status: 'cancelled', finished_at: clock.now(), lease_token: null, lease_expires_at: null })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst();
}

/** Jobs waiting to run (queued and due, or running), for /api/v1/status and the metrics. */
export async function queueDepth(db: Kysely<Database>): Promise<{ queued: number; running: number }> {
  const rows = await db
    .selectFrom('jobs')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('status', 'in', ['queued', 'running'])
    .groupBy('status')
    .execute();
  const count = (status: string) => Number(rows.find((r) => r.status === status)?.n ?? 0);
  return { queued: count('queued'), running: count('running') };
}
