import { createHash, randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../../platform/db/schema.js';
import { json } from '../../../platform/db/schema.js';
import type { Clock } from '../../../platform/clock.js';
import type { ImportStatus, ImportTrigger, VulnSource } from '../tables.js';
import { detectFormat, sourceOf, type InputFormat } from './detect.js';
import { fetchUrl, listDataFiles, localPath, locationKind, openFile, prepareInput, type OpenedInput } from './input.js';
import { ImportError, parseInput, type ParseProgress } from './parsers.js';
import { dropStaged, StageWriter } from './stage.js';
import { applyRun, liveSummary, lockSource } from './apply.js';

/**
 * One import of one location (a file, a directory of NVD or OSV files, or a URL) into the store.
 *
 * Atomicity: records are parsed from the stream and written to the staging tables in batches, each
 * batch its own short statement (on PGlite, other requests run between batches). Only when the whole
 * input has been read and checked does one transaction apply the run to the live tables, update the
 * source's state and record the run's counts (import/apply.ts). A broken or truncated input fails the
 * run before that transaction: the live data stays as it was, the staging rows are dropped, and the
 * run records the error with the byte offset and record number where it broke.
 */
export interface ImportDeps {
  db: Kysely<Database>;
  clock: Clock;
  log: Logger;
}

export interface ImportOptions {
  /** Forces the source; otherwise it is detected from the content. */
  source?: VulnSource;
  trigger: ImportTrigger;
  jobId?: string | null;
  signal?: AbortSignal;
  /** Sync: skip applying when the content is byte-identical to what was last applied from here. */
  skipUnchanged?: boolean;
  /** Sync: send the stored ETag / Last-Modified and record the new ones. */
  conditional?: boolean;
  /**
   * Seed content: apply only while the source has never been imported successfully, checked under the
   * source's lock, so a seed running beside the first sync can never overwrite fresher data.
   */
  onlyIfNeverImported?: boolean;
}

export interface ImportResult {
  run_id: string;
  source: VulnSource | null;
  location: string;
  status: ImportStatus;
  records: number;
  inserted: number;
  updated: number;
  deleted: number;
  unchanged: number;
  findings_escalated: number;
  findings_restored: number;
  error: string | null;
  error_offset: number | null;
  error_record: number | null;
  error_context: string | null;
}

interface Input {
  open(): Promise<OpenedInput | 'not-modified'>;
  name: string;
}

/** A run left 'running' this long without a heartbeat belonged to a process that died. */
const STALE_MS = 30 * 60_000;
const HEARTBEAT_MS = 5_000;

async function cleanupAbandoned(db: Kysely<Database>, clock: Clock): Promise<void> {
  const cutoff = new Date(clock.now().getTime() - STALE_MS);
  const stale = await db
    .updateTable('vulndb_import_runs')
    .set({ status: 'failed', finished_at: clock.now(), error: 'abandoned: the importing process stopped' })
    .where('status', '=', 'running')
    .where('heartbeat_at', '<', cutoff)
    .returning('id')
    .execute();
  for (const { id } of stale) await dropStaged(db, id);
}

async function inputsOf(location: string, options: ImportOptions, deps: ImportDeps): Promise<{ inputs: Input[]; kind: 'url' | 'file' | 'directory' }> {
  const kind = await locationKind(location);
  if (kind === 'url') {
    return {
      kind,
      inputs: [
        {
          name: location,
          async open() {
            const previous =
              options.conditional && (await mayBeUnchanged(deps.db, options.source, location))
                ? await deps.db.selectFrom('vulndb_sync_locations').select(['etag', 'last_modified']).where('location', '=', location).executeTakeFirst()
                : undefined;
            const response = await fetchUrl(location, previous ? { etag: previous.etag, lastModified: previous.last_modified } : null, options.signal);
            if (response.notModified || !response.stream) return 'not-modified';
            pendingValidators.set(location, response.validators);
            return prepareInput(response.stream, location, response.onProgress);
          },
        },
      ],
    };
  }
  const path = localPath(location);
  const files = kind === 'directory' ? await listDataFiles(path) : [path];
  if (files.length === 0) throw new Error(`no .json, .csv or .gz data files in ${location}`);
  return { kind, inputs: files.map((file) => ({ name: kind === 'directory' ? file : basename(file), open: () => prepareInput(openFile(file), basename(file)) })) };
}

// HTTP validators of a download, recorded only once its content was applied (or found unchanged).
const pendingValidators = new Map<string, { etag: string | null; lastModified: string | null }>();

function emptyResult(runId: string, location: string, source: VulnSource | null): ImportResult {
  return {
    run_id: runId,
    source,
    location,
    status: 'running',
    records: 0,
    inserted: 0,
    updated: 0,
    deleted: 0,
    unchanged: 0,
    findings_escalated: 0,
    findings_restored: 0,
    error: null,
    error_offset: null,
    error_record: null,
    error_context: null,
  };
}

export async function importLocation(deps: ImportDeps, location: string, options: ImportOptions): Promise<ImportResult> {
  const { db, clock } = deps;
  const runId = randomUUID();
  const result = emptyResult(runId, location, options.source ?? null);
  const progress: ParseProgress = { records: 0, lastId: null, metadata: {} };
  let created = false;
  let source: VulnSource | null = options.source ?? null;
  let writer: StageWriter | null = null;
  let bytes = 0;
  let sha256: string | null = null;
  const digests: string[] = [];
  let lastBeat = Date.now();

  const createRun = async (runSource: VulnSource) => {
    const now = clock.now();
    await db
      .insertInto('vulndb_import_runs')
      .values({ id: runId, source: runSource, trigger: options.trigger, location, job_id: options.jobId ?? null, status: 'running', started_at: now, heartbeat_at: now })
      .execute();
    created = true;
  };

  try {
    await cleanupAbandoned(db, clock);
    const { inputs, kind } = await inputsOf(location, options, deps);
    let notModified = false;
    for (const input of inputs) {
      options.signal?.throwIfAborted();
      const opened = await input.open();
      if (opened === 'not-modified') {
        notModified = true;
        break;
      }
      const format: InputFormat | null = detectFormat(opened.head, source ?? undefined);
      if (!format) {
        opened.stream.destroy();
        throw new ImportError(
          source ? `${opened.name} is not a ${source} file this importer understands` : `cannot tell what ${opened.name} is (KEV, EPSS, NVD or OSV): pass --source`,
          0,
          progress.records,
          opened.name,
        );
      }
      const detected = sourceOf(format);
      if (source && detected !== source) throw new ImportError(`${opened.name} is ${detected} data, not ${source}`, 0, progress.records, opened.name);
      if (kind === 'directory' && (detected === 'kev' || detected === 'epss')) {
        throw new ImportError(`a directory may hold NVD or OSV files only (${opened.name} is ${detected})`, 0, progress.records, opened.name);
      }
      source = detected;
      result.source = source;
      if (!created) await createRun(source);
      writer ??= new StageWriter(db, runId);
      for await (const record of parseInput(opened, format, progress)) {
        writer.add(record, progress.records);
        if (writer.full) {
          await writer.flush();
          options.signal?.throwIfAborted();
          if (Date.now() - lastBeat > HEARTBEAT_MS) {
            lastBeat = Date.now();
            await db.updateTable('vulndb_import_runs').set({ heartbeat_at: clock.now(), records: progress.records }).where('id', '=', runId).execute();
          }
        }
      }
      await writer.flush();
      bytes += opened.raw.bytes;
      digests.push(opened.raw.digest());
    }
    result.records = progress.records;
    // One file: its SHA-256; a directory: the digest of its files' digests (in their sorted order).
    sha256 = digests.length === 1 ? digests[0]! : digests.length > 1 ? createHash('sha256').update(digests.join('\n')).digest('hex') : null;

    if (notModified) {
      const unchangedSource = source ?? (await knownSource(db, location));
      if (!unchangedSource) throw new Error(`${location} answered 304 Not Modified but was never imported`);
      source = unchangedSource;
      result.source = source;
      if (!created) await createRun(source);
      return await finishUnchanged(deps, result, { bytes: 0, sha256: null, metadata: { http: 'not modified' } });
    }
    if (!source || !writer) throw new ImportError('no input', 0, 0, location);
    if ((source === 'kev' || source === 'epss') && progress.records === 0) {
      throw new ImportError(`the ${source} file holds no records: refusing to empty the ${source} data`, bytes, 0, location);
    }
    if (options.skipUnchanged && sha256 && (await mayBeUnchanged(db, source, location))) {
      const last = await db.selectFrom('vulndb_sync_locations').select('sha256').where('location', '=', location).executeTakeFirst();
      if (last?.sha256 === sha256) return await finishUnchanged(deps, result, { bytes, sha256, metadata: progress.metadata });
    }

    const appliedSource = source;
    const counts = await db.transaction().execute(async (trx) => {
      await lockSource(trx, appliedSource);
      if (options.onlyIfNeverImported) {
        const state = await trx.selectFrom('vulndb_sources').select('last_success_at').where('source', '=', appliedSource).executeTakeFirst();
        if (state?.last_success_at) return null;
      }
      const applied = await applyRun(trx, clock, runId, appliedSource);
      const summary = await liveSummary(trx, appliedSource);
      const now = clock.now();
      await trx
        .updateTable('vulndb_import_runs')
        .set({
          status: 'succeeded',
          finished_at: now,
          heartbeat_at: now,
          bytes,
          sha256,
          records: progress.records,
          inserted: applied.inserted,
          updated: applied.updated,
          deleted: applied.deleted,
          unchanged: applied.unchanged,
          findings_escalated: applied.findingsEscalated,
          findings_restored: applied.findingsRestored,
          metadata: json(progress.metadata),
        })
        .where('id', '=', runId)
        .execute();
      const { version, date } = dataVersion(appliedSource, progress.metadata, summary.newest);
      await upsertSource(trx, appliedSource, now, {
        origin: options.trigger,
        location,
        record_count: summary.count,
        data_version: version,
        data_date: date,
        metadata: json(progress.metadata),
        last_run_id: runId,
        last_run_at: now,
        last_status: 'succeeded',
        last_error: null,
        last_success_at: now,
        last_success_run_id: runId,
      });
      await recordLocation(trx, location, appliedSource, sha256, now, true);
      return applied;
    });
    if (!counts) {
      // A seed that lost the race to a real import: recorded as a run, the source's state untouched.
      return await finishUnchanged(deps, result, { bytes, sha256, metadata: { ...progress.metadata, skipped: 'the source was imported already' } }, false);
    }
    Object.assign(result, {
      status: 'succeeded' as const,
      inserted: counts.inserted,
      updated: counts.updated,
      deleted: counts.deleted,
      unchanged: counts.unchanged,
      findings_escalated: counts.findingsEscalated,
      findings_restored: counts.findingsRestored,
    });
    deps.log.info({ run_id: runId, source, location, ...counts, records: progress.records }, 'vulndb import applied');
    return result;
  } catch (error) {
    const failure =
      error instanceof ImportError
        ? error
        : new ImportError(error instanceof Error ? error.message : String(error), null, progress.records, progress.lastId ? `after ${progress.lastId}` : null);
    Object.assign(result, {
      status: 'failed' as const,
      records: progress.records,
      error: failure.message,
      error_offset: failure.offset,
      error_record: failure.record,
      error_context: failure.context,
    });
    await recordFailure(deps, result, options, created, bytes).catch((e: unknown) => deps.log.error({ err: e }, 'recording a failed vulndb import failed'));
    deps.log.warn({ run_id: runId, source, location, error: failure.message, offset: failure.offset, record: failure.record }, 'vulndb import failed');
    return result;
  } finally {
    pendingValidators.delete(location);
    await dropStaged(db, runId).catch((e: unknown) => deps.log.error({ err: e }, 'dropping vulndb staging rows failed'));
  }
}

/**
 * Whether "this location's content did not change" means "nothing to apply": for KEV and EPSS only
 * when the live snapshot came from this location (another file may have replaced it since); an
 * unchanged NVD or OSV slice has nothing new to merge.
 */
async function mayBeUnchanged(db: Kysely<Database>, source: VulnSource | undefined | null, location: string): Promise<boolean> {
  if (!source) return false;
  if (source === 'nvd' || source === 'osv') return true;
  const state = await db.selectFrom('vulndb_sources').select('location').where('source', '=', source).executeTakeFirst();
  return state?.location === location;
}

async function knownSource(db: Kysely<Database>, location: string): Promise<VulnSource | null> {
  const row = await db.selectFrom('vulndb_sync_locations').select('source').where('location', '=', location).executeTakeFirst();
  return row?.source ?? null;
}

function dataVersion(source: VulnSource, metadata: Record<string, unknown>, newest: Date | null): { version: string | null; date: Date | null } {
  const date = (value: unknown) => {
    if (typeof value !== 'string' || !value) return null;
    const text = /(Z|[+-]\d{2}:?\d{2})$/.test(value) ? value : `${value}Z`;
    return Number.isNaN(Date.parse(text)) ? null : new Date(text);
  };
  switch (source) {
    case 'kev':
      return { version: (metadata.catalog_version as string | null) ?? null, date: date(metadata.date_released) };
    case 'epss':
      return { version: (metadata.model_version as string | null) ?? null, date: date(metadata.score_date) };
    case 'nvd':
      return { version: metadata.version ? `NVD CVE API ${String(metadata.version)}` : null, date: newest };
    case 'osv':
      return { version: null, date: newest };
  }
}

async function upsertSource(executor: Kysely<Database>, source: VulnSource, now: Date, values: Record<string, unknown>): Promise<void> {
  await executor
    .insertInto('vulndb_sources')
    .values({ source, updated_at: now, ...values } as never)
    .onConflict((oc) => oc.column('source').doUpdateSet({ ...values, updated_at: now } as never))
    .execute();
}

async function recordLocation(executor: Kysely<Database>, location: string, source: VulnSource, sha256: string | null, now: Date, changed: boolean): Promise<void> {
  const validators = pendingValidators.get(location);
  const values = {
    source,
    checked_at: now,
    ...(changed ? { changed_at: now, sha256 } : {}),
    ...(validators ? { etag: validators.etag, last_modified: validators.lastModified } : {}),
  };
  await executor
    .insertInto('vulndb_sync_locations')
    .values({ location, ...values })
    .onConflict((oc) => oc.column('location').doUpdateSet(values))
    .execute();
}

async function finishUnchanged(
  deps: ImportDeps,
  result: ImportResult,
  info: { bytes: number; sha256: string | null; metadata: Record<string, unknown> },
  updateSource = true,
): Promise<ImportResult> {
  const { db, clock } = deps;
  const source = result.source!;
  await db.transaction().execute(async (trx) => {
    const now = clock.now();
    await trx
      .updateTable('vulndb_import_runs')
      .set({ status: 'unchanged', finished_at: now, heartbeat_at: now, bytes: info.bytes, sha256: info.sha256, records: result.records, unchanged: result.records, metadata: json(info.metadata) })
      .where('id', '=', result.run_id)
      .execute();
    if (!updateSource) return;
    await upsertSource(trx, source, now, { last_run_id: result.run_id, last_run_at: now, last_status: 'unchanged', last_error: null });
    await recordLocation(trx, result.location, source, info.sha256, now, false);
  });
  deps.log.info({ run_id: result.run_id, source, location: result.location }, 'vulndb import: content unchanged');
  return { ...result, status: 'unchanged', unchanged: result.records };
}

async function recordFailure(deps: ImportDeps, result: ImportResult, options: ImportOptions, created: boolean, bytes: number): Promise<void> {
  const { db, clock } = deps;
  const now = clock.now();
  const source = result.source;
  await db.transaction().execute(async (trx) => {
    const failure = {
      status: 'failed' as const,
      finished_at: now,
      heartbeat_at: now,
      bytes,
      records: result.records,
      error: result.error?.slice(0, 2_000) ?? 'failed',
      error_offset: result.error_offset,
      error_record: result.error_record,
      error_context: result.error_context?.slice(0, 1_000) ?? null,
    };
    if (created) {
      await trx.updateTable('vulndb_import_runs').set(failure).where('id', '=', result.run_id).execute();
    } else if (source) {
      await trx
        .insertInto('vulndb_import_runs')
        .values({ id: result.run_id, source, trigger: options.trigger, job_id: options.jobId ?? null, location: result.location, started_at: now, ...failure })
        .execute();
    }
    if (source) await upsertSource(trx, source, now, { last_run_id: result.run_id, last_run_at: now, last_status: 'failed', last_error: failure.error });
  });
}

/** Exposed for tests: the rows a run left in staging (none once it finished). */
export async function stagedRows(db: Kysely<Database>, runId: string): Promise<number> {
  const row = await sql<{ n: number }>`
    SELECT ((SELECT count(*) FROM vulndb_kev_stage WHERE run_id = ${runId}::uuid) + (SELECT count(*) FROM vulndb_epss_stage WHERE run_id = ${runId}::uuid)
      + (SELECT count(*) FROM vulndb_nvd_stage WHERE run_id = ${runId}::uuid) + (SELECT count(*) FROM vulndb_osv_stage WHERE run_id = ${runId}::uuid))::int AS n`.execute(db);
  return row.rows[0]!.n;
}
