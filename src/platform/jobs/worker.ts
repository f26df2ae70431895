import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { json } from '../db/schema.js';
import type { Notifier } from '../db/notifier.js';
import type { Clock } from '../clock.js';
import { DEFAULT_LEASE_MS, defaultBackoffMs, PermanentJobError, type JobDefinition } from './definition.js';
import { JOBS_CHANNEL, type JobRow } from './queue.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';

export interface WorkerOptions {
  db: Kysely<Database>;
  clock: Clock;
  log: Logger;
  notifier?: Notifier;
  definitions: JobDefinition<any>[];
  concurrency?: number;
  pollMs?: number;
  id?: string;
  onOutcome?: (kind: string, outcome: 'succeeded' | 'failed' | 'retried' | 'lease_expired') => void;
}

interface Running {
  job: JobRow;
  controller: AbortController;
  done: Promise<void>;
}

const REAP_EVERY_MS = 5_000;

/**
 * Claims jobs with FOR UPDATE SKIP LOCKED under a lease, so any number of worker processes can share
 * one database: a job is run by one worker at a time, and a job whose worker died (lease expired) is
 * taken over by another until its attempts are used up.
 */
export class Worker {
  readonly id: string;
  private readonly definitions = new Map<string, JobDefinition<any>>();
  private readonly running = new Map<string, Running>();
  private readonly concurrency: number;
  private readonly pollMs: number;
  private active = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private lastReap = 0;

  constructor(private readonly options: WorkerOptions) {
    this.id = options.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    for (const definition of options.definitions) this.definitions.set(definition.kind, definition);
    this.concurrency = options.concurrency ?? 4;
    this.pollMs = options.pollMs ?? 1_000;
  }

  get kinds(): string[] {
    return [...this.definitions.keys()];
  }

  async start(): Promise<void> {
    if (this.active) return;
    this.active = true;
    if (this.options.notifier) {
      this.unlisten = await this.options.notifier.listen(JOBS_CHANNEL, (kind) => {
        if (this.definitions.has(kind)) this.wake?.();
      });
    }
    this.loop = this.run();
  }

  /**
   * Stops claiming and waits for running jobs up to `graceMs`; jobs still running then are aborted and
   * released so another worker picks them up at once instead of waiting for the lease to expire.
   */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.active) return;
    this.active = false;
    this.wake?.();
    await this.loop;
    await this.unlisten?.();
    const pending = [...this.running.values()];
    const finished = await Promise.race([
      Promise.all(pending.map((r) => r.done)).then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref()),
    ]);
    if (!finished) {
      const leftovers = [...this.running.values()];
      for (const r of leftovers) r.controller.abort(new Error('worker shutting down'));
      await this.release(leftovers.map((r) => r.job));
    }
  }

  /**
   * Runs every job that is due, including those made due by other jobs, until none is left. Tests and
   * one-shot commands use it instead of the background loop.
   */
  async drain(maxRounds = 1_000): Promise<number> {
    let total = 0;
    for (let round = 0; round < maxRounds; round++) {
      await this.reap();
      const claimed = await this.claim(this.concurrency);
      if (claimed.length === 0) break;
      total += claimed.length;
      await Promise.all(claimed.map((job) => this.execute(job)));
    }
    return total;
  }

  private async run(): Promise<void> {
    while (this.active) {
      try {
        if (this.options.clock.now().getTime() - this.lastReap >= REAP_EVERY_MS) await this.reap();
        const free = this.concurrency - this.running.size;
        const claimed = free > 0 ? await this.claim(free) : [];
        for (const job of claimed) this.track(job);
        if (claimed.length === free && free > 0) continue;
      } catch (error) {
        this.options.log.error({ err: error }, 'job claim failed');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  private track(job: JobRow): void {
    const controller = new AbortController();
    const entry: Running = { job, controller, done: Promise.resolve() };
    entry.done = this.execute(job, controller)
      // The database may be gone when the outcome is recorded (an outage): the job keeps its lease,
      // which expires, and it runs again. Never an unhandled rejection that ends the process.
      .catch((error: unknown) => this.options.log.error({ err: error, job_id: job.id, kind: job.kind }, 'job outcome could not be recorded'))
      .finally(() => {
        this.running.delete(job.id);
        this.wake?.();
      });
    this.running.set(job.id, entry);
  }

  private async claim(limit: number): Promise<JobRow[]> {
    if (limit <= 0 || this.definitions.size === 0) return [];
    const kinds = this.kinds;
    const leases = kinds.map((k) => this.definitions.get(k)!.leaseMs ?? DEFAULT_LEASE_MS);
    const now = this.options.clock.now();
    const result = await sql<JobRow>`
      WITH lease AS (
        SELECT * FROM unnest(${kinds}::text[], ${leases}::bigint[]) AS l(kind, lease_ms)
      ), next AS (
        SELECT j.id FROM jobs j
        WHERE j.kind = ANY(${kinds}::text[])
          AND ((j.status = 'queued' AND j.run_at <= ${now})
            OR (j.status = 'running' AND j.lease_expires_at < ${now} AND j.attempts < j.max_attempts))
        ORDER BY j.run_at, j.created_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE jobs j SET
        status = 'running',
        attempts = j.attempts + 1,
        lease_token = gen_random_uuid(),
        lease_owner = ${this.id},
        lease_expires_at = ${now}::timestamptz + make_interval(secs => lease.lease_ms / 1000.0),
        started_at = coalesce(j.started_at, ${now})
      FROM next, lease
      WHERE j.id = next.id AND lease.kind = j.kind
      RETURNING j.*`.execute(this.options.db);
    return result.rows;
  }

  /** Fails, for good, the jobs whose worker died holding them on their last attempt. */
  async reap(): Promise<number> {
    const now = this.options.clock.now();
    this.lastReap = now.getTime();
    const expired = await this.options.db
      .selectFrom('jobs')
      .select('id')
      .where('kind', 'in', this.kinds.length ? this.kinds : [''])
      .where('status', '=', 'running')
      .where('lease_expires_at', '<', now)
      .whereRef('attempts', '>=', 'max_attempts')
      .limit(100)
      .execute();
    for (const { id } of expired) {
      await this.options.db.transaction().execute(async (trx) => {
        const job = await trx
          .updateTable('jobs')
          .set({
            status: 'failed',
            finished_at: now,
            lease_token: null,
            lease_expires_at: null,
            last_error: sql<string>`'worker stopped unexpectedly; gave up after ' || attempts || ' attempts'`,
          })
          .where('id', '=', id)
          .where('status', '=', 'running')
          .where('lease_expires_at', '<', now)
          .returningAll()
          .executeTakeFirst();
        if (job) {
          await this.definitions.get(job.kind)?.onFailed?.(job, job.last_error ?? '', trx);
          this.options.onOutcome?.(job.kind, 'lease_expired');
        }
      });
    }
    return expired.length;
  }

  private async execute(job: JobRow, controller = new AbortController()): Promise<void> {
    const definition = this.definitions.get(job.kind)!;
    const { db, clock } = this.options;
    const log = this.options.log.child({ job_id: job.id, kind: job.kind, attempt: job.attempts });
    const leaseMs = definition.leaseMs ?? DEFAULT_LEASE_MS;
    const heartbeat = async () => {
      const renewed = await db
        .updateTable('jobs')
        .set({ lease_expires_at: new Date(clock.now().getTime() + leaseMs) })
        .where('id', '=', job.id)
        .where('lease_token', '=', job.lease_token)
        .where('status', '=', 'running')
        .returning('id')
        .executeTakeFirst();
      if (!renewed) controller.abort(new Error('lease lost or job cancelled'));
    };
    const timer = setInterval(() => heartbeat().catch(() => undefined), Math.max(leaseMs / 3, 50));
    timer.unref();
    try {
      const result = await definition.run(job.payload, { job, signal: controller.signal, db, clock, log, heartbeat });
      // A transaction only when the kind has a hook to run with the status change.
      const complete = async (executor: Kysely<Database>) => {
        const done = await executor
          .updateTable('jobs')
          .set({
            status: 'succeeded',
            result: json(result ?? null),
            finished_at: clock.now(),
            lease_token: null,
            lease_expires_at: null,
            last_error: null,
          })
          .where('id', '=', job.id)
          .where('lease_token', '=', job.lease_token)
          .where('status', '=', 'running')
          .returningAll()
          .executeTakeFirst();
        if (done) await definition.onSucceeded?.(done, result, executor);
      };
      await this.persistOutcome(job, leaseMs, () => (definition.onSucceeded ? db.transaction().execute(complete) : complete(db)));
      this.options.onOutcome?.(job.kind, 'succeeded');
    } catch (error) {
      if (controller.signal.aborted && !(error instanceof PermanentJobError)) {
        log.warn({ reason: String(controller.signal.reason) }, 'job aborted');
        return;
      }
      await this.persistOutcome(job, leaseMs, () => this.recordFailure(job, definition, error));
    } finally {
      clearInterval(timer);
    }
  }

  /**
   * Records a job's outcome, retrying while the database cannot be reached (an outage, a restart),
   * so that a job does not sit `running` for the rest of its lease (30 minutes for some kinds, and
   * an audit blocks its workspace's next one meanwhile). Gives up once the lease would have run out
   * or the worker stops: the lease then expires and the job runs again. Every outcome write is
   * guarded by the lease token, so repeating one that did commit changes nothing.
   */
  private async persistOutcome(job: JobRow, leaseMs: number, write: () => Promise<void>): Promise<void> {
    const giveUpAt = Date.now() + leaseMs;
    for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
      try {
        return await write();
      } catch (error) {
        if (!isDatabaseUnavailable(error) || !this.active || Date.now() + delay > giveUpAt) throw error;
        this.options.log.warn({ job_id: job.id, kind: job.kind, retry_in_ms: delay }, 'database unavailable while recording the job outcome; retrying');
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private async recordFailure(job: JobRow, definition: JobDefinition<any>, error: unknown): Promise<void> {
    const { db, clock } = this.options;
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 2_000);
    const final = error instanceof PermanentJobError || job.attempts >= job.max_attempts;
    const now = clock.now();
    await db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('jobs')
        .set(
          final
            ? { status: 'failed', finished_at: now, last_error: message, lease_token: null, lease_expires_at: null }
            : {
                status: 'queued',
                last_error: message,
                lease_token: null,
                lease_expires_at: null,
                run_at: new Date(now.getTime() + (definition.backoffMs ?? defaultBackoffMs)(job.attempts)),
              },
        )
        .where('id', '=', job.id)
        .where('lease_token', '=', job.lease_token)
        .where('status', '=', 'running')
        .returningAll()
        .executeTakeFirst();
      if (row && final) await definition.onFailed?.(row, message, trx);
    });
    this.options.log.warn({ job_id: job.id, kind: job.kind, attempt: job.attempts, final, error: message }, 'job attempt failed');
    this.options.onOutcome?.(job.kind, final ? 'failed' : 'retried');
  }

  /** Hands unfinished jobs back to the queue without counting the interrupted attempt. */
  private async release(jobs: JobRow[]): Promise<void> {
    const tokens = jobs.map((j) => j.lease_token).filter((t): t is string => t !== null);
    if (tokens.length === 0) return;
    await this.options.db
      .updateTable('jobs')
      .set({
        status: 'queued',
        attempts: sql<number>`greatest(attempts - 1, 0)`,
        lease_token: null,
        lease_owner: null,
        lease_expires_at: null,
        run_at: this.options.clock.now(),
      })
      .where('lease_token', 'in', tokens)
      .where('status', '=', 'running')
      .execute()
      .catch((error: unknown) => this.options.log.error({ err: error }, 'releasing jobs failed'));
  }
}
