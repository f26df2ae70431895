// Queue throughput: N no-op jobs enqueued in transactions, then claimed and completed by two workers
// (on PostgreSQL each with its own connection pool, as two processes would have).
import pino from 'pino';
import { openDatabase } from '../dist/platform/db/database.js';
import { migrate } from '../dist/platform/db/migrator.js';
import { enqueueJob, queueDepth } from '../dist/platform/jobs/queue.js';
import { Worker } from '../dist/platform/jobs/worker.js';
import { systemClock } from '../dist/platform/clock.js';
import { printTable, scratchDatabase } from './lib.js';

const log = pino({ level: 'silent' });

export async function benchQueue({ kinds, jobs = 5000 }) {
  const rows = [];
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    const a = await openDatabase(database.url);
    const b = kind === 'postgres' ? await openDatabase(database.url) : a;
    try {
      await migrate(a.db);
      const t0 = performance.now();
      for (let start = 0; start < jobs; start += 500) {
        await a.db.transaction().execute(async (trx) => {
          for (let n = start; n < Math.min(jobs, start + 500); n++) await enqueueJob(trx, systemClock, { kind: 'bench.noop', payload: { n } });
        });
      }
      const enqueueMs = performance.now() - t0;
      let done = 0;
      const definition = { kind: 'bench.noop', run: async () => void done++ };
      const workers = [a, b].map((h) => new Worker({ db: h.db, clock: systemClock, log, definitions: [definition], concurrency: 8, pollMs: 50, notifier: h.notifier }));
      const t1 = performance.now();
      await Promise.all(workers.map((w) => w.start()));
      while (done < jobs) await new Promise((r) => setTimeout(r, 10));
      const processMs = performance.now() - t1;
      await Promise.all(workers.map((w) => w.stop()));
      const depth = await queueDepth(a.db);
      rows.push({
        database: kind,
        jobs,
        enqueue_per_s: Math.round(jobs / (enqueueMs / 1000)),
        claim_complete_per_s: Math.round(jobs / (processMs / 1000)),
        end_to_end_per_s: Math.round(jobs / ((enqueueMs + processMs) / 1000)),
        left_queued: depth.queued + depth.running,
      });
    } finally {
      if (b !== a) await b.close();
      await a.close();
      await database.drop();
    }
  }
  printTable('Queue (2 workers, concurrency 8 each)', rows);
  return rows;
}
