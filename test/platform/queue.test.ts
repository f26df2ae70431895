import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { ManualClock } from '../../src/platform/clock.js';
import type { DatabaseHandle } from '../../src/platform/db/database.js';
import { cancelJob, enqueueJob, getJob, queueDepth } from '../../src/platform/jobs/queue.js';
import { Worker } from '../../src/platform/jobs/worker.js';
import { Scheduler } from '../../src/platform/jobs/scheduler.js';
import { PermanentJobError, type JobDefinition } from '../../src/platform/jobs/definition.js';
import { deferred } from '../harness/deferred.js';
import { createTestDatabase, type TestDatabase } from '../harness/database.js';

const log = pino({ level: 'silent' });
let testDb: TestDatabase;
let db: DatabaseHandle['db'];

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.handle.db;
});
afterAll(() => testDb.dispose());

/** A second handle where the backend allows one (PostgreSQL): a second process's own connections. */
async function secondHandle(): Promise<DatabaseHandle> {
  return testDb.kind === 'postgres' ? testDb.openAnother() : testDb.handle;
}

function worker(definitions: JobDefinition<any>[], clock: ManualClock, handle = testDb.handle, concurrency = 4) {
  return new Worker({ db: handle.db, clock, log, definitions, concurrency, pollMs: 20, notifier: handle.notifier });
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('job queue', () => {
  it('runs each of 1,000 jobs exactly once with two workers', async () => {
    const clock = new ManualClock();
    const runs = new Map<number, number>();
    const byWorker = { a: 0, b: 0 };
    const definition = (name: 'a' | 'b'): JobDefinition<{ n: number }> => ({
      kind: 'test.count',
      async run({ n }) {
        runs.set(n, (runs.get(n) ?? 0) + 1);
        byWorker[name]++;
        await new Promise((r) => setImmediate(r));
      },
    });
    await db.transaction().execute(async (trx) => {
      for (let n = 0; n < 1000; n++) await enqueueJob(trx, clock, { kind: 'test.count', payload: { n } });
    });
    const other = await secondHandle();
    const a = worker([definition('a')], clock);
    const b = worker([definition('b')], clock, other);
    await Promise.all([a.start(), b.start()]);
    await waitFor(async () => (await queueDepth(db)).queued + (await queueDepth(db)).running === 0 && runs.size === 1000);
    await Promise.all([a.stop(), b.stop()]);
    expect(runs.size).toBe(1000);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    const succeeded = await db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('kind', '=', 'test.count')
      .where('status', '=', 'succeeded')
      .executeTakeFirstOrThrow();
    expect(Number(succeeded.n)).toBe(1000);
    // Both workers took part (neither starved the other).
    expect(byWorker.a).toBeGreaterThan(0);
    expect(byWorker.b).toBeGreaterThan(0);
  });

  it('hands the job of a worker that stopped holding it to another worker once the lease expires', async () => {
    const started = deferred();
    let aborted = false;
    const deadClock = new ManualClock('2026-01-01T00:00:00Z');
    // The "dead" worker's handler never finishes; its heartbeats stay at its own frozen time.
    const hanging: JobDefinition = {
      kind: 'test.takeover',
      leaseMs: 1_000,
      run: (_p, ctx) =>
        new Promise((_resolve, reject) => {
          started.resolve();
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        }),
    };
    const { id } = await enqueueJob(db, deadClock, { kind: 'test.takeover' });
    const dead = worker([hanging], deadClock);
    const deadDrain = dead.drain(1);
    await started.promise;
    expect((await getJob(db, id))?.status).toBe('running');

    const liveClock = new ManualClock('2026-01-01T00:00:05Z');
    const other = await secondHandle();
    const ranBy: string[] = [];
    const live = worker([{ kind: 'test.takeover', leaseMs: 1_000, run: async (_p, ctx) => void ranBy.push(ctx.job.lease_owner ?? '') }], liveClock, other);
    await live.drain();
    const job = await getJob(db, id);
    expect(job?.status).toBe('succeeded');
    expect(job?.attempts).toBe(2);
    expect(ranBy).toEqual([live.id]);
    // The dead worker's next heartbeat finds its lease gone and aborts its handler.
    await waitFor(async () => aborted, 5_000);
    await deadDrain;
    expect((await getJob(db, id))?.status).toBe('succeeded');
  });

  it('fails a job for good when its worker dies on the last attempt, with a reason, calling onFailed once', async () => {
    const clock = new ManualClock('2026-02-01T00:00:00Z');
    const failures: string[] = [];
    const { id } = await enqueueJob(db, clock, { kind: 'test.lastattempt', maxAttempts: 1 });
    // Simulate a worker that claimed the job and vanished without a heartbeat.
    await db
      .updateTable('jobs')
      .set({ status: 'running', attempts: 1, lease_token: crypto.randomUUID(), lease_owner: 'gone', lease_expires_at: new Date('2026-02-01T00:00:01Z') })
      .where('id', '=', id)
      .execute();
    clock.advance(2_000);
    const w = worker([{ kind: 'test.lastattempt', run: async () => 'never', onFailed: async (job, error) => void failures.push(`${job.id}:${error}`) }], clock);
    expect(await w.drain()).toBe(0);
    const job = await getJob(db, id);
    expect(job?.status).toBe('failed');
    expect(job?.last_error).toBe('worker stopped unexpectedly; gave up after 1 attempts');
    expect(failures).toEqual([`${id}:worker stopped unexpectedly; gave up after 1 attempts`]);
    await w.drain();
    expect(failures).toHaveLength(1);
  });

  it('retries a failing handler with backoff and stops at the maximum attempts', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    let calls = 0;
    const failed: string[] = [];
    const definition: JobDefinition = {
      kind: 'test.flaky',
      maxAttempts: 3,
      backoffMs: (attempt) => attempt * 10_000,
      run: async () => {
        calls++;
        throw new Error(`boom ${calls}`);
      },
      onFailed: async (_job, error) => void failed.push(error),
    };
    const { id } = await enqueueJob(db, clock, { kind: 'test.flaky', maxAttempts: 3 });
    const w = worker([definition], clock);
    await w.drain();
    expect(calls).toBe(1);
    let job = await getJob(db, id);
    expect(job?.status).toBe('queued');
    expect(job?.last_error).toBe('boom 1');
    expect(new Date(job!.run_at).getTime()).toBe(clock.now().getTime() + 10_000);
    // Not due yet: backoff holds it.
    await w.drain();
    expect(calls).toBe(1);
    clock.advance(10_000);
    await w.drain();
    expect(calls).toBe(2);
    clock.advance(20_000);
    await w.drain();
    expect(calls).toBe(3);
    job = await getJob(db, id);
    expect(job?.status).toBe('failed');
    expect(job?.attempts).toBe(3);
    expect(failed).toEqual(['boom 3']);
    clock.advance(3_600_000);
    await w.drain();
    expect(calls).toBe(3);
  });

  it('fails at once on a permanent error', async () => {
    const clock = new ManualClock();
    const { id } = await enqueueJob(db, clock, { kind: 'test.permanent', maxAttempts: 5 });
    await worker(
      [
        {
          kind: 'test.permanent',
          run: async () => {
            throw new PermanentJobError('bad input');
          },
        },
      ],
      clock,
    ).drain();
    const job = await getJob(db, id);
    expect(job).toMatchObject({ status: 'failed', attempts: 1, last_error: 'bad input' });
  });

  it('runs a scheduled job only once its run_at has come', async () => {
    const clock = new ManualClock('2026-04-01T00:00:00Z');
    let ran = 0;
    const w = worker([{ kind: 'test.later', run: async () => void ran++ }], clock);
    await enqueueJob(db, clock, { kind: 'test.later', runAt: new Date('2026-04-01T01:00:00Z') });
    await w.drain();
    expect(ran).toBe(0);
    clock.set('2026-04-01T01:00:00Z');
    await w.drain();
    expect(ran).toBe(1);
  });

  it('keeps one live job per dedupe key and allows a new one after it finished', async () => {
    const clock = new ManualClock();
    const first = await enqueueJob(db, clock, { kind: 'test.dedupe', dedupeKey: 'k1' });
    const second = await enqueueJob(db, clock, { kind: 'test.dedupe', dedupeKey: 'k1' });
    expect(first.deduplicated).toBe(false);
    expect(second).toEqual({ id: first.id, deduplicated: true });
    const other = await enqueueJob(db, clock, { kind: 'test.dedupe', dedupeKey: 'k2' });
    expect(other.id).not.toBe(first.id);
    await worker([{ kind: 'test.dedupe', run: async () => undefined }], clock).drain();
    const third = await enqueueJob(db, clock, { kind: 'test.dedupe', dedupeKey: 'k1' });
    expect(third.deduplicated).toBe(false);
    expect(third.id).not.toBe(first.id);
  });

  it('enqueues inside the caller transaction: a rollback leaves no job', async () => {
    const clock = new ManualClock();
    let id = '';
    await expect(
      db.transaction().execute(async (trx) => {
        id = (await enqueueJob(trx, clock, { kind: 'test.rollback' })).id;
        throw new Error('change failed');
      }),
    ).rejects.toThrow('change failed');
    expect(await getJob(db, id)).toBeUndefined();
  });

  it('cancels a queued job so it never runs', async () => {
    const clock = new ManualClock();
    let ran = 0;
    const { id } = await enqueueJob(db, clock, { kind: 'test.cancel' });
    expect((await cancelJob(db, clock, id))?.status).toBe('cancelled');
    await worker([{ kind: 'test.cancel', run: async () => void ran++ }], clock).drain();
    expect(ran).toBe(0);
    expect(await cancelJob(db, clock, id)).toBeUndefined();
  });

  it('wakes a started worker through LISTEN/NOTIFY without waiting for its poll', async () => {
    const clock = new ManualClock();
    const done = deferred();
    const w = new Worker({ db, clock, log, definitions: [{ kind: 'test.wake', run: async () => done.resolve() }], pollMs: 60_000, notifier: testDb.handle.notifier });
    await w.start();
    // Let the first (empty) claim finish so the worker is idle on its 60 s poll.
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    await enqueueJob(db, clock, { kind: 'test.wake' });
    await done.promise;
    expect(Date.now() - t0).toBeLessThan(10_000);
    await w.stop();
  });

  it('fires a recurring schedule once per interval even with two schedulers', async () => {
    const clock = new ManualClock('2026-05-01T00:00:00Z');
    const other = await secondHandle();
    const schedules = [{ name: 'test-every-hour', kind: 'test.scheduled', intervalMs: 3_600_000 }];
    const s1 = new Scheduler({ db, clock, log, schedules });
    const s2 = new Scheduler({ db: other.db, clock, log, schedules });
    await s1.register();
    await s2.register();
    const fired = [...(await Promise.all([s1.tick(), s2.tick()])).flat()];
    expect(fired).toEqual(['test-every-hour']);
    expect(await Promise.all([s1.tick(), s2.tick()])).toEqual([[], []]);
    clock.advance(3_600_000);
    expect([...(await Promise.all([s1.tick(), s2.tick()])).flat()]).toEqual(['test-every-hour']);
    const jobs = await db.selectFrom('jobs').select('id').where('kind', '=', 'test.scheduled').execute();
    // The second run found the first one still queued: the dedupe key folds them into one.
    expect(jobs).toHaveLength(1);
    await worker([{ kind: 'test.scheduled', run: async () => undefined }], clock).drain();
    clock.advance(3_600_000);
    await s1.tick();
    expect(await db.selectFrom('jobs').select('id').where('kind', '=', 'test.scheduled').execute()).toHaveLength(2);
  });

  it('records the outcome once the database answers again, instead of leaving the job running for its lease', async () => {
    const clock = new ManualClock();
    // The worker's view of the database refuses the first two attempts to write the outcome, as
    // during a restart: the job has run, only its "succeeded" cannot be stored yet.
    const outage = new RefuseOutcomeWrites(2);
    const handle = { ...testDb.handle, db: db.withPlugin(outage) };
    const ran: number[] = [];
    const definition: JobDefinition<{ n: number }> = {
      kind: 'test.outcome-outage',
      leaseMs: 600_000,
      async run({ n }) {
        ran.push(n);
      },
    };
    await db.transaction().execute((trx) => enqueueJob(trx, clock, { kind: 'test.outcome-outage', payload: { n: 1 } }).then(() => undefined));
    const w = worker([definition], clock, handle as DatabaseHandle);
    await w.start();
    // Far sooner than the 10-minute lease: the write is retried while the database is unreachable.
    await waitFor(async () => (await db.selectFrom('jobs').select('status').where('kind', '=', 'test.outcome-outage').executeTakeFirstOrThrow()).status === 'succeeded', 20_000);
    await w.stop();
    expect(outage.refused).toBe(2);
    expect(ran).toEqual([1]);
    const row = await db.selectFrom('jobs').selectAll().where('kind', '=', 'test.outcome-outage').executeTakeFirstOrThrow();
    expect(row.attempts).toBe(1);
  });

  it('releases running jobs on shutdown without counting the attempt', async () => {
    const clock = new ManualClock();
    const started = deferred();
    const { id } = await enqueueJob(db, clock, { kind: 'test.release' });
    const w = new Worker({
      db,
      clock,
      log,
      pollMs: 20,
      definitions: [
        {
          kind: 'test.release',
          run: (_p, ctx) =>
            new Promise((_r, reject) => {
              started.resolve();
              ctx.signal.addEventListener('abort', () => reject(new Error('stop')));
            }),
        },
      ],
    });
    await w.start();
    await started.promise;
    await w.stop(50);
    const job = await getJob(db, id);
    expect(job).toMatchObject({ status: 'queued', attempts: 0, lease_token: null });
  });
});

/** Refuses the first `times` writes of a succeeded job outcome with the error a refused connection gives. */
class RefuseOutcomeWrites implements KyselyPlugin {
  refused = 0;
  constructor(private times: number) {}
  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (this.refused < this.times && node.kind === 'UpdateQueryNode' && JSON.stringify(node).includes('"succeeded"')) {
      this.refused++;
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    }
    return node;
  }
  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}
