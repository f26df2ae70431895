import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { Multipart } from '@fastify/multipart';
import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInTenant } from '../../platform/audit/audit-log.js';
import { ArtifactTooLargeError, type ArtifactStore } from '../../platform/artifacts/store.js';
import { AppError, badRequest, CODE_BY_STATUS, conflict, notFound, payloadTooLarge, unavailable } from '../../platform/http/errors.js';
import { discardPart } from '../../platform/http/multipart.js';
import { cancelJob, enqueueJob } from '../../platform/jobs/queue.js';
import { isSource } from './import/detect.js';
import { checkUrl } from './import/input.js';
import { outboundPolicyOf } from '../../platform/outbound/index.js';
import { presentRun } from './service.js';
import { deleteUploads, IMPORT_JOB, type ImportJobPayload } from './import-job.js';
import type { VulnSource } from './tables.js';
import './tables.js';

/** Several files of one upload are read as a directory is (NVD or OSV only); this many at most. */
export const MAX_UPLOAD_FILES = 10_000;

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
      await auditInTenant(trx, deps.clock, context, {
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
          throw conflict(
            `only imports made through POST /vulndb/imports can be cancelled (this one was made by ${run.trigger === 'cli' ? 'the command line' : `the ${run.trigger}`})`,
          );
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
        await auditInTenant(trx, deps.clock, context, {
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
