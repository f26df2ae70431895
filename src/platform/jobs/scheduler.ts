import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { json } from '../db/schema.js';
import type { Clock } from '../clock.js';
import { enqueueJob } from './queue.js';

export interface ScheduleDefinition {
  name: string;
  kind: string;
  intervalMs: number;
  payload?: Record<string, unknown>;
  /** Attempts of each enqueued run. */
  maxAttempts?: number;
  /** When the first run is due; defaults to now. */
  firstRunAt?: Date;
}

/**
 * Recurring schedules as rows: whichever scheduler process locks a due row (SKIP LOCKED) enqueues the
 * run and moves next_run_at, so a schedule fires once however many schedulers run. The dedupe key keeps
 * a slow run from piling up behind itself.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<unknown> | null = null;

  constructor(
    private readonly options: {
      db: Kysely<Database>;
      clock: Clock;
      log: Logger;
      schedules: ScheduleDefinition[];
      tickMs?: number;
    },
  ) {}

  async start(): Promise<void> {
    await this.register();
    const tickMs = this.options.tickMs ?? 1_000;
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.tick()
        .catch((error: unknown) => this.options.log.error({ err: error }, 'scheduler tick failed'))
        .finally(() => (this.ticking = null));
    }, tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
  }

  /** Adds or updates the schedule rows; an existing next_run_at is kept so restarts do not re-fire. */
  async register(): Promise<void> {
    const now = this.options.clock.now();
    for (const s of this.options.schedules) {
      await this.options.db
        .insertInto('job_schedules')
        .values({
          name: s.name,
          kind: s.kind,
          payload: json(s.payload ?? {}),
          interval_ms: s.intervalMs,
          next_run_at: s.firstRunAt ?? now,
        })
        .onConflict((oc) => oc.column('name').doUpdateSet({ kind: s.kind, payload: json(s.payload ?? {}), interval_ms: s.intervalMs }))
        .execute();
    }
  }

  /** Enqueues every due schedule once; returns the names fired. */
  async tick(): Promise<string[]> {
    const { db, clock } = this.options;
    const now = clock.now();
    const maxAttempts = new Map(this.options.schedules.map((s) => [s.name, s.maxAttempts]));
    return db.transaction().execute(async (trx) => {
      const due = await trx.selectFrom('job_schedules').selectAll().where('next_run_at', '<=', now).forUpdate().skipLocked().execute();
      for (const row of due) {
        await enqueueJob(trx, clock, {
          kind: row.kind,
          payload: row.payload,
          dedupeKey: `schedule:${row.name}`,
          maxAttempts: maxAttempts.get(row.name) ?? 3,
        });
        await trx
          .updateTable('job_schedules')
          .set({ last_run_at: now, next_run_at: new Date(now.getTime() + Number(row.interval_ms)) })
          .where('name', '=', row.name)
          .execute();
      }
      return due.map((r) => r.name);
    });
  }
}
