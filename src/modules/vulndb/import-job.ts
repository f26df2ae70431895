import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { ArtifactStore } from '../../platform/artifacts/store.js';
import type { Database } from '../../platform/db/schema.js';
import type { JobDefinition } from '../../platform/jobs/definition.js';
import { importLocation } from './import/importer.js';
import { importLimitsOf } from './import/archive.js';
import { outboundPolicyOf } from '../../platform/outbound/index.js';
import { dropStaged } from './import/stage.js';
import type { VulnSource } from './tables.js';
import './tables.js';

/**
 * The `vulndb.import` job: carries out an import run that POST /api/v1/vulndb/imports queued
 * (api-imports.ts), on a worker, with the same importer as the CLI and the sync.
 */
export const IMPORT_JOB = 'vulndb.import';

export interface ImportJobPayload {
  run_id: string;
  /** The uploaded files in the artifact store, in upload order (none for a URL). */
  files: Array<{ key: string; name: string }>;
  /** A URL import: fetched by the worker. */
  url?: string;
  source: VulnSource | null;
}

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'artifacts' | 'log'>;

export async function deleteUploads(store: ArtifactStore | null, payload: ImportJobPayload, log: Deps['log']): Promise<void> {
  if (!store) return;
  await Promise.all(payload.files.map((f) => store.delete(f.key).catch((error: unknown) => log.warn({ err: error, key: f.key }, 'deleting an imported upload failed'))));
}

async function failRun(db: Kysely<Database>, deps: Pick<Deps, 'clock'>, runId: string, error: string): Promise<void> {
  const now = deps.clock.now();
  await db
    .updateTable('vulndb_import_runs')
    .set({ status: 'failed', finished_at: now, heartbeat_at: now, error: error.slice(0, 2_000) })
    .where('id', '=', runId)
    .where('status', 'in', ['queued', 'running'])
    .execute();
}

export function importJob(deps: Deps): JobDefinition<ImportJobPayload> {
  return {
    kind: IMPORT_JOB,
    // A full NVD or OSV upload takes minutes; the worker renews the lease while it runs.
    leaseMs: 30 * 60_000,
    async run(payload, ctx) {
      const run = await ctx.db.selectFrom('vulndb_import_runs').select(['status', 'location', 'error', 'stage_id']).where('id', '=', payload.run_id).executeTakeFirst();
      // A run whose worker died may have been marked abandoned by another import meanwhile: this job is its retry.
      const abandoned = run?.status === 'failed' && run.error?.startsWith('abandoned');
      if (!run || (run.status !== 'queued' && run.status !== 'running' && !abandoned)) {
        await deleteUploads(deps.artifacts, payload, ctx.log);
        return { run_id: payload.run_id, status: run?.status ?? 'missing' };
      }
      // An earlier attempt may have died half-way: this one starts again from a clean run, staging
      // under its own id. The earlier attempt's rows go (were it still running, it is fenced off: it
      // finds the run is no longer its own and records nothing).
      const stageId = randomUUID();
      await dropStaged(ctx.db, run.stage_id ?? payload.run_id);
      const now = ctx.clock.now();
      await ctx.db
        .updateTable('vulndb_import_runs')
        .set({
          status: 'running',
          stage_id: stageId,
          started_at: now,
          heartbeat_at: now,
          finished_at: null,
          bytes: 0,
          records: 0,
          error: null,
          error_offset: null,
          error_record: null,
          error_context: null,
        })
        .where('id', '=', payload.run_id)
        .execute();
      const store = deps.artifacts;
      if (!store && !payload.url) {
        await failRun(ctx.db, ctx, payload.run_id, 'artifact storage not configured: the upload cannot be read');
        return { run_id: payload.run_id, status: 'failed' };
      }
      const files = payload.files.map((file) => ({
        name: file.name,
        async open(): Promise<Readable> {
          const stream = await store!.get(file.key);
          if (!stream) throw new Error(`the uploaded file ${file.name} is no longer in the artifact store`);
          return stream;
        },
      }));
      const importDeps = { db: ctx.db, clock: ctx.clock, log: ctx.log, outbound: outboundPolicyOf(deps.config), limits: importLimitsOf(deps.config) };
      const result = await importLocation(importDeps, payload.url ?? run.location, {
        runId: payload.run_id,
        stageId,
        // After every staged batch: renews the lease, and aborts the signal once the job was cancelled
        // or another worker took it over, so the import stops within a batch.
        // (A failed renewal is the worker's timer's business, as between batches.)
        onBatch: () => ctx.heartbeat().catch(() => undefined),
        source: payload.source ?? undefined,
        trigger: 'api',
        jobId: ctx.job.id,
        signal: ctx.signal,
        content: payload.url ? undefined : { kind: files.length > 1 ? 'directory' : 'file', files },
      });
      const current = await ctx.db.selectFrom('vulndb_import_runs').select('stage_id').where('id', '=', payload.run_id).executeTakeFirst();
      if (current?.stage_id !== stageId) {
        // This worker lost the job (its lease expired) and another attempt carries out the run now: the
        // run and its upload are that attempt's. (The queue ignores this attempt's outcome: not its lease.)
        throw new Error('another attempt of the job carries out this import now');
      }
      // Interrupted before it was applied (an import applied already stays applied, whatever came after).
      if (ctx.signal.aborted && result.status !== 'succeeded' && result.status !== 'unchanged') {
        const job = await ctx.db.selectFrom('jobs').select('status').where('id', '=', ctx.job.id).executeTakeFirst();
        const ownRun = () => ctx.db.updateTable('vulndb_import_runs').where('id', '=', payload.run_id).where('stage_id', '=', stageId).where('status', '=', 'running');
        if (job?.status === 'cancelled') {
          // POST /vulndb/imports/{id}/cancel: the run ends here, nothing applied.
          const cancelledAt = ctx.clock.now();
          await ownRun().set({ status: 'cancelled', finished_at: cancelledAt, heartbeat_at: cancelledAt, error: null }).execute();
          await deleteUploads(store, payload, ctx.log);
          return { run_id: result.run_id, status: 'cancelled', records: result.records };
        }
        // The worker is stopping (or lost its lease): the job runs again, the upload is still there.
        // Unless another attempt took the run over meanwhile: then it is that attempt's.
        await ownRun().set({ status: 'queued', error: null, records: 0, bytes: 0 }).execute();
        throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('interrupted');
      }
      await deleteUploads(store, payload, ctx.log);
      return { run_id: result.run_id, status: result.status, records: result.records };
    },
    async onFailed(job, error, trx) {
      const payload = job.payload as unknown as ImportJobPayload;
      await failRun(trx, deps, payload.run_id, `the import job failed: ${error}`);
      // Outside the transaction: the files are of no use any more.
      void deleteUploads(deps.artifacts, payload, deps.log);
    },
  };
}
