import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import type { Multipart } from '@fastify/multipart';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { actorOf, writeAudit } from '../../platform/audit/audit-log.js';
import { ArtifactTooLargeError, type ArtifactStore } from '../../platform/artifacts/store.js';
import type { Database } from '../../platform/db/schema.js';
import { AppError, badRequest, CODE_BY_STATUS, conflict, notFound, payloadTooLarge, unavailable } from '../../platform/http/errors.js';
import { discardPart } from '../../platform/http/multipart.js';
import type { JobDefinition } from '../../platform/jobs/definition.js';
import { cancelJob, enqueueJob } from '../../platform/jobs/queue.js';
import { isSource } from './import/detect.js';
import { importLocation } from './import/importer.js';
import { importLimitsOf } from './import/archive.js';
import { checkUrl } from './import/input.js';
import { outboundPolicyOf } from '../../platform/outbound/index.js';
import { dropStaged } from './import/stage.js';
import { presentRun } from './service.js';
import type { VulnSource } from './tables.js';
import './tables.js';

/**
 * Vulnerability data through the API (POST /api/v1/vulndb/imports), so that an embedded or air-gapped
 * deployment never needs a second process on its database.
 *
 * An upload is streamed part by part into the artifact store (never held in memory; the size limit
 * CONTROLGRAPH_VULNDB_UPLOAD_MAX_BYTES counts all its files together, 413 above it, and nothing is kept
 * then). The import run is then created with status `queued` and a `vulndb.import` job carries it out
 * on a worker with the same importer as the CLI and the sync: staged, checked whole, applied in one
 * transaction, or failed with where the file broke and nothing changed. Its row shows the progress
 * (bytes and records read, then inserted/updated/deleted/unchanged, or the error).
 */
export const IMPORT_JOB = 'vulndb.import';

/** Several files of one upload are read as a directory is (NVD or OSV only); this many at most. */
export const MAX_UPLOAD_FILES = 10_000;

export interface ImportJobPayload {
  run_id: string;
  /** The uploaded files in the artifact store, in upload order (none for a URL). */
  files: Array<{ key: string; name: string }>;
  /** A URL import: fetched by the worker. */
  url?: string;
  source: VulnSource | null;
}

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'artifacts' | 'log'>;

function requireStore(deps: Pick<AppDeps, 'artifacts'>): ArtifactStore {
  if (!deps.artifacts) throw unavailable('artifact storage not configured: uploads are kept there until imported (ARTIFACT_STORE)');
  return deps.artifacts;
}

/** A file name safe to record and show: no path, no control characters, at most 200 characters. */
function cleanName(raw: string | undefined, index: number): string {
  const name = [...basename((raw ?? '').replace(/\\/g, '/'))]
    .filter((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) !== 0x7f)
    .join('')
    .trim()
    .slice(-200);
  return name || `file-${index + 1}`;
}

/** The location an upload is shown as: `upload:<name>` (and how many more files it had). */
function uploadLocation(names: string[]): string {
  return `upload:${names[0]}${names.length > 1 ? ` (+${names.length - 1} more file${names.length > 2 ? 's' : ''})` : ''}`;
}

/** Multipart and stream errors of a malformed request are the client's: 400 (413 for its size limits). */
function clientError(error: unknown, maxBytes: number): unknown {
  if (error instanceof AppError) return error;
  if (error instanceof ArtifactTooLargeError || (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
    return payloadTooLarge(`the upload exceeds the limit of ${maxBytes} bytes (CONTROLGRAPH_VULNDB_UPLOAD_MAX_BYTES); nothing was kept`, { max_bytes: maxBytes });
  }
  const status = (error as { statusCode?: number }).statusCode;
  if (status === 413) return payloadTooLarge(`the upload exceeds the multipart limits (${MAX_UPLOAD_FILES} files, a few fields)`);
  if (status && status >= 400 && status < 500) return new AppError(status, CODE_BY_STATUS[status] ?? 'BAD_REQUEST', (error as Error).message);
  return error;
}

export function createApiImports(deps: Deps) {
  const db = deps.database.db;

  async function queue(context: RequestContext, input: { location: string; source: VulnSource | null; size: number | null; payload: Omit<ImportJobPayload, 'run_id'> }) {
    const id = randomUUID();
    const now = deps.clock.now();
    return db.transaction().execute(async (trx) => {
      const job = await enqueueJob(trx, deps.clock, { kind: IMPORT_JOB, payload: { run_id: id, ...input.payload }, maxAttempts: 3 });
      const row = await trx
        .insertInto('vulndb_import_runs')
        .values({
          id,
          source: input.source,
          trigger: 'api',
          location: input.location,
          job_id: job.id,
          status: 'queued',
          started_at: now,
          heartbeat_at: now,
          size_bytes: input.size,
          requested_by: context.actor.id,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await writeAudit(trx, deps.clock, actorOf(context), {
        tenantId: context.scope.tenantId,
        action: 'vulndb.import_requested',
        targetType: 'vulndb_import',
        targetId: id,
        details: { location: input.location, source: input.source, size_bytes: input.size },
      });
      return presentRun(row);
    });
  }

  return {
    /**
     * multipart/form-data: an optional field `source` (kev, epss, nvd or osv; detected from the content
     * otherwise) and one or more file parts. Several files are one import, read as a directory is.
     */
    async upload(context: RequestContext, parts: AsyncIterableIterator<Multipart>, declaredLength: number | null) {
      const store = requireStore(deps);
      const maxBytes = deps.config.vulndbUploadMaxBytes;
      // Refused before reading a byte when the request says it is too large (multipart framing aside).
      if (declaredLength !== null && declaredLength > maxBytes + 1024 * 1024) throw clientError(new ArtifactTooLargeError(maxBytes), maxBytes);
      const id = randomUUID();
      const files: ImportJobPayload['files'] = [];
      let total = 0;
      let source: VulnSource | null = null;
      try {
        for await (const part of parts) {
          if (part.type === 'field') {
            if (part.fieldname !== 'source') throw badRequest(`unknown field "${part.fieldname}": only source and files are accepted`);
            const value = String(part.value).trim().toLowerCase();
            if (!isSource(value)) throw badRequest(`source must be one of kev, epss, nvd, osv (got "${String(part.value).slice(0, 40)}")`);
            source = value;
            continue;
          }
          if (files.length >= MAX_UPLOAD_FILES) {
            await discardPart(part.file);
            throw badRequest(`at most ${MAX_UPLOAD_FILES} files per upload`);
          }
          const name = cleanName(part.filename, files.length);
          const key = `vulndb/uploads/${id}/${String(files.length).padStart(5, '0')}`;
          try {
            const stored = await store.put(key, part.file, { maxBytes: maxBytes - total });
            if (part.file.truncated) throw new ArtifactTooLargeError(maxBytes);
            total += stored.size;
          } catch (error) {
            await discardPart(part.file);
            await store.delete(key).catch(() => undefined);
            throw error;
          }
          files.push({ key, name });
        }
        if (files.length === 0) throw badRequest('no file in the upload: send the data as a multipart file part (field "file")');
        if (total === 0) throw badRequest('the uploaded file is empty');
      } catch (error) {
        await Promise.all(files.map((f) => store.delete(f.key).catch(() => undefined)));
        // busboy's refusals of a malformed body become 400 in the error handler (platform/http/error-handler.ts).
        throw clientError(error, maxBytes);
      }
      try {
        return await queue(context, { location: uploadLocation(files.map((f) => f.name)), source, size: total, payload: { files, source } });
      } catch (error) {
        await Promise.all(files.map((f) => store.delete(f.key).catch(() => undefined)));
        throw error;
      }
    },

    /** JSON {url, source?}: the worker fetches the URL (checked now, and again on every connection). */
    async fromUrl(context: RequestContext, url: string, source: VulnSource | null) {
      try {
        checkUrl(outboundPolicyOf(deps.config), url);
      } catch (error) {
        throw badRequest((error as Error).message);
      }
      return queue(context, { location: url, source, size: null, payload: { files: [], url, source } });
    },

    async get(id: string) {
      const row = await db.selectFrom('vulndb_import_runs').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row) throw notFound('import not found');
      return presentRun(row);
    },

    /**
     * Cancels an API import that has not finished. A queued one ends `cancelled` at once (its job will
     * not run, its upload is removed); a running one stops at its next batch of records, when its
     * worker learns of the cancel, and then ends `cancelled`. Nothing of it is applied, unless the
     * worker was already applying it: that completes (the run then says succeeded).
     */
    async cancel(context: RequestContext, id: string) {
      const outcome = await db.transaction().execute(async (trx) => {
        const run = await trx.selectFrom('vulndb_import_runs').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
        if (!run) throw notFound('import not found');
        if (run.trigger !== 'api' || !run.job_id) {
          throw conflict(`only imports made through POST /vulndb/imports can be cancelled (this one was made by ${run.trigger === 'cli' ? 'the command line' : `the ${run.trigger}`})`);
        }
        if (run.status !== 'queued' && run.status !== 'running') throw conflict(`the import is ${run.status} already: nothing to cancel`);
        // Locked: a worker claiming the job meanwhile (FOR UPDATE SKIP LOCKED) passes it by.
        const job = await trx.selectFrom('jobs').select(['status', 'payload']).where('id', '=', run.job_id).forUpdate().executeTakeFirst();
        await cancelJob(trx, deps.clock, run.job_id);
        // No worker carries it out (queued, or its job ended otherwise): it ends now.
        const now = job?.status === 'running' ? null : deps.clock.now();
        const row = now
          ? await trx
              .updateTable('vulndb_import_runs')
              .set({ status: 'cancelled', finished_at: now, heartbeat_at: now })
              .where('id', '=', id)
              .returningAll()
              .executeTakeFirstOrThrow()
          : run;
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId: context.scope.tenantId,
          action: 'vulndb.import_cancelled',
          targetType: 'vulndb_import',
          targetId: id,
          details: { location: run.location, status: run.status },
        });
        return { row, payload: now ? (job?.payload as unknown as ImportJobPayload | undefined) : undefined };
      });
      if (outcome.payload) await deleteUploads(deps.artifacts, outcome.payload, deps.log);
      return presentRun(outcome.row);
    },
  };
}

async function deleteUploads(store: ArtifactStore | null, payload: ImportJobPayload, log: Deps['log']): Promise<void> {
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
      const run = await ctx.db
        .selectFrom('vulndb_import_runs')
        .select(['status', 'location', 'error', 'stage_id'])
        .where('id', '=', payload.run_id)
        .executeTakeFirst();
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
