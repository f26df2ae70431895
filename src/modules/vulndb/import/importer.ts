import { createHash, randomUUID } from 'node:crypto';
import { basename, relative } from 'node:path';
import type { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../../platform/db/schema.js';
import { json } from '../../../platform/db/schema.js';
import type { Clock } from '../../../platform/clock.js';
import type { OutboundPolicy } from '../../../platform/outbound/index.js';
import type { ImportStatus, ImportTrigger, VulnSource } from '../tables.js';
import { detectFormat, sourceOf, type InputFormat } from './detect.js';
import { ExpansionBudget, fetchUrl, listDataFiles, localPath, locationKind, openFile, type OpenedInput } from './input.js';
import { DEFAULT_IMPORT_LIMITS, openContainer, type Container, type ImportLimits } from './archive.js';
import { ImportError, parseInput, type ParseProgress } from './parsers.js';
import { dropStaged, StageWriter } from './stage.js';
import { applyRun, liveSummary, lockSource } from './apply.js';

/**
 * One import of one location (a file, a directory of NVD or OSV files, an archive, or a URL) into the store.
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
  /** The outbound guard URLs are fetched through (outboundPolicyOf(config)); without it a URL is refused. */
  outbound?: OutboundPolicy;
  /** Archive and decompression limits (importLimitsOf(config)); the documented defaults otherwise. */
  limits?: ImportLimits;
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
  /** An API import: its run row exists already (status queued) and is carried out, not created. */
  runId?: string;
  /**
   * The job attempt carrying out an API import (with `runId`): records are staged under this id, and
   * the run is written (progress, outcome, apply) only while its `stage_id` is still this one, so an
   * attempt that lost its lease to another can neither apply nor overwrite nor remove the other's
   * work. Interrupted (`signal` aborted), it records nothing: the job decides (queued again, or
   * cancelled). Without it the run's id is the staging id.
   */
  stageId?: string;
  /** Called after each staged batch: a job renews its lease there and so learns of a cancel or a lost lease. */
  onBatch?: () => Promise<void>;
  /**
   * The content, when it is not at `location` (an upload in the artifact store): one file, or several
   * read as a directory is (NVD or OSV only). `location` is then only the name shown.
   */
  content?: { kind: 'file' | 'directory'; files: Array<{ name: string; open(): Promise<Readable> }> };
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

/** One file, upload or download of an import: a data file or an archive of data files. */
interface Input {
  open(): Promise<{ stream: Readable; onProgress?: () => void } | 'not-modified'>;
  name: string;
  /** A local file: a zip is read in place instead of being copied first. */
  path?: string;
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
    .returning(['id', 'stage_id'])
    .execute();
  for (const { id, stage_id } of stale) await dropStaged(db, stage_id ?? id);
}

/** An attempt of an import job found that another attempt carries out its run now. */
class SupersededError extends Error {
  override name = 'SupersededError';
  constructor() {
    super('another attempt of the import job carries out this run now');
  }
}

async function inputsOf(location: string, options: ImportOptions, deps: ImportDeps): Promise<{ inputs: Input[]; kind: 'url' | 'file' | 'directory' }> {
  if (options.content) {
    return {
      kind: options.content.kind,
      inputs: options.content.files.map((file) => ({ name: file.name, open: async () => ({ stream: await file.open() }) })),
    };
  }
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
            if (!deps.outbound) throw new Error(`${location}: URL imports need the outbound policy (a file or directory is read directly)`);
            const response = await fetchUrl(deps.outbound, location, previous ? { etag: previous.etag, lastModified: previous.last_modified } : null, options.signal);
            if (response.notModified || !response.stream) return 'not-modified';
            pendingValidators.set(location, response.validators);
            return { stream: response.stream, onProgress: response.onProgress };
          },
        },
      ],
    };
  }
  const path = localPath(location);
  const files = kind === 'directory' ? await listDataFiles(path) : [path];
  if (files.length === 0) throw new Error(`no .json, .csv or .gz data files (or .zip, .tar, .tar.gz archives) in ${location}`);
  return {
    kind,
    // Named in errors by its path inside the directory.
    inputs: files.map((file) => ({ name: kind === 'directory' ? relative(path, file) : basename(file), path: file, open: async () => ({ stream: openFile(file) }) })),
  };
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

/** One import while it runs: the state its steps read and update. */
interface ImportRun {
  runId: string;
  stageId: string;
  /** A job attempt's run (`runId` and `stageId` given): every write checks it is still this attempt's. */
  fenced: boolean;
  result: ImportResult;
  progress: ParseProgress;
  /** Whether the run's row exists. */
  created: boolean;
  source: VulnSource | null;
  writer: StageWriter | null;
  bytes: number;
  sha256: string | null;
  lastBeat: number;
}

/** In a transaction about to write the outcome: the run is still this attempt's (locked until commit). */
async function ensureOwned(run: ImportRun, trx: Kysely<Database>): Promise<void> {
  if (!run.fenced) return;
  const own = await trx
    .selectFrom('vulndb_import_runs')
    .select('id')
    .where('id', '=', run.runId)
    .where('stage_id', '=', run.stageId)
    .where('status', '=', 'running')
    .forUpdate()
    .executeTakeFirst();
  if (!own) throw new SupersededError();
}

/** The run's row: the queued run of an API import gets its source; any other import's is inserted. */
async function createRun(deps: ImportDeps, run: ImportRun, location: string, options: ImportOptions, runSource: VulnSource): Promise<void> {
  const now = deps.clock.now();
  if (options.runId) {
    await deps.db
      .updateTable('vulndb_import_runs')
      .set({ source: runSource, heartbeat_at: now })
      .where('id', '=', run.runId)
      .$if(run.fenced, (qb) => qb.where('stage_id', '=', run.stageId))
      .execute();
    return;
  }
  await deps.db
    .insertInto('vulndb_import_runs')
    .values({ id: run.runId, source: runSource, trigger: options.trigger, location, job_id: options.jobId ?? null, status: 'running', started_at: now, heartbeat_at: now })
    .execute();
  run.created = true;
}

export async function importLocation(deps: ImportDeps, location: string, options: ImportOptions): Promise<ImportResult> {
  const { db } = deps;
  const runId = options.runId ?? randomUUID();
  const run: ImportRun = {
    runId,
    stageId: options.stageId ?? runId,
    fenced: Boolean(options.runId && options.stageId),
    result: emptyResult(runId, location, options.source ?? null),
    progress: { records: 0, lastId: null, metadata: {} },
    created: Boolean(options.runId),
    source: options.source ?? null,
    writer: null,
    bytes: 0,
    sha256: null,
    lastBeat: Date.now(),
  };
  const { result, progress } = run;
  const owned = (trx: Kysely<Database>) => ensureOwned(run, trx);

  try {
    await cleanupAbandoned(db, deps.clock);
    const notModified = await stageInputs(deps, run, location, options);
    if (notModified) {
      const unchangedSource = run.source ?? (await knownSource(db, location));
      if (!unchangedSource) throw new Error(`${location} answered 304 Not Modified but was never imported`);
      run.source = unchangedSource;
      result.source = unchangedSource;
      if (!run.created) await createRun(deps, run, location, options, unchangedSource);
      return await finishUnchanged(deps, result, { bytes: 0, sha256: null, metadata: { http: 'not modified' } }, owned);
    }
    const { source, writer, bytes, sha256 } = run;
    if (!source || !writer) throw new ImportError('no input', 0, 0, location);
    if ((source === 'kev' || source === 'epss') && progress.records === 0) {
      throw new ImportError(`the ${source} file holds no records: refusing to empty the ${source} data`, bytes, 0, location);
    }
    if (options.skipUnchanged && sha256 && (await mayBeUnchanged(db, source, location))) {
      const last = await db.selectFrom('vulndb_sync_locations').select('sha256').where('location', '=', location).executeTakeFirst();
      if (last?.sha256 === sha256) return await finishUnchanged(deps, result, { bytes, sha256, metadata: progress.metadata }, owned);
    }

    const counts = await applyStaged(deps, run, source, location, options);
    if (!counts) {
      // A seed that lost the race to a real import: recorded as a run, the source's state untouched.
      return await finishUnchanged(deps, result, { bytes, sha256, metadata: { ...progress.metadata, skipped: 'the source was imported already' } }, owned, false);
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
    return await failedImport(deps, run, location, options, error);
  } finally {
    pendingValidators.delete(location);
    await dropStaged(db, run.stageId).catch((e: unknown) => deps.log.error({ err: e }, 'dropping vulndb staging rows failed'));
  }
}

/**
 * Reads every input into the staging tables, checking each data file's format and source. True when
 * a URL answered Not Modified (nothing read then). Sets the run's source, byte count and SHA-256.
 */
async function stageInputs(deps: ImportDeps, run: ImportRun, location: string, options: ImportOptions): Promise<boolean> {
  const { progress } = run;
  const { inputs, kind } = await inputsOf(location, options, deps);
  let notModified = false;
  // Decompressed content of the whole import (gzip, zip and tar entries) is bounded: archive bombs.
  const budget = new ExpansionBudget(deps.limits?.uncompressedMaxBytes ?? DEFAULT_IMPORT_LIMITS.uncompressedMaxBytes);
  const digests: string[] = [];
  let dataInputs = 0;
  let sourceRecorded = false;
  for (const input of inputs) {
    options.signal?.throwIfAborted();
    const raw = await input.open();
    if (raw === 'not-modified') {
      notModified = true;
      break;
    }
    const container = await openContainer(raw.stream, input.name, {
      path: input.path,
      onProgress: raw.onProgress,
      budget,
      limits: deps.limits ?? DEFAULT_IMPORT_LIMITS,
    });
    try {
      for await (const opened of container.entries()) {
        options.signal?.throwIfAborted();
        dataInputs++;
        const format = checkedFormat(opened, run.source, kind, dataInputs, progress);
        run.source = sourceOf(format);
        run.result.source = run.source;
        // Once, with the first data file (an archive may hold hundreds of thousands).
        if (!sourceRecorded) {
          await createRun(deps, run, location, options, run.source);
          sourceRecorded = true;
        }
        run.writer ??= new StageWriter(deps.db, run.stageId);
        await stageRecords(deps, run, opened, format, container, options);
      }
      run.bytes += container.bytes();
      digests.push(container.digest());
    } finally {
      await container.close();
    }
  }
  // The last batch; batches span files (an archive of small advisories is one statement per 2,000 records).
  await run.writer?.flush();
  run.result.records = progress.records;
  // One file: its SHA-256; a directory: the digest of its files' digests (in their sorted order).
  run.sha256 = digests.length === 1 ? digests[0]! : digests.length > 1 ? createHash('sha256').update(digests.join('\n')).digest('hex') : null;
  return notModified;
}

/** The format of one data file, refused when it is unknown, another source's, or not allowed with others. */
function checkedFormat(opened: OpenedInput, source: VulnSource | null, kind: 'url' | 'file' | 'directory', dataInputs: number, progress: ParseProgress): InputFormat {
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
  // KEV and EPSS files are whole snapshots: one per import, never several merged.
  if (dataInputs > 1 && (detected === 'kev' || detected === 'epss')) {
    throw new ImportError(`an archive or upload of several files may hold NVD or OSV files only (${opened.name} is ${detected})`, 0, progress.records, opened.name);
  }
  return format;
}

/** Parses one data file into the staging tables in batches, with a heartbeat and progress on the run. */
async function stageRecords(deps: ImportDeps, run: ImportRun, opened: OpenedInput, format: InputFormat, container: Container, options: ImportOptions): Promise<void> {
  const writer = run.writer!;
  for await (const record of parseInput(opened, format, run.progress)) {
    writer.add(record, run.progress.records);
    if (writer.full) {
      await writer.flush();
      await options.onBatch?.();
      options.signal?.throwIfAborted();
      if (Date.now() - run.lastBeat > HEARTBEAT_MS) {
        run.lastBeat = Date.now();
        // Progress for GET /vulndb/imports/{id}: raw bytes and records read so far.
        await deps.db
          .updateTable('vulndb_import_runs')
          .set({ heartbeat_at: deps.clock.now(), records: run.progress.records, bytes: run.bytes + container.bytes() })
          .where('id', '=', run.runId)
          .$if(run.fenced, (qb) => qb.where('stage_id', '=', run.stageId))
          .execute();
      }
    }
  }
}

/**
 * The one transaction that applies the staged run to the live tables and records the run's counts and
 * the source's state. Null when a seed finds the source imported already.
 */
async function applyStaged(deps: ImportDeps, run: ImportRun, appliedSource: VulnSource, location: string, options: ImportOptions) {
  const { clock } = deps;
  const { runId, stageId, bytes, sha256, progress } = run;
  return deps.db.transaction().execute(async (trx) => {
    await lockSource(trx, appliedSource);
    await ensureOwned(run, trx);
    if (options.onlyIfNeverImported) {
      const state = await trx.selectFrom('vulndb_sources').select('last_success_at').where('source', '=', appliedSource).executeTakeFirst();
      if (state?.last_success_at) return null;
    }
    const applied = await applyRun(trx, clock, stageId, appliedSource);
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
}

/** The result of an import that threw: interrupted (nothing recorded: the job decides), or failed (recorded). */
async function failedImport(deps: ImportDeps, run: ImportRun, location: string, options: ImportOptions, error: unknown): Promise<ImportResult> {
  const { result, progress, runId, source } = run;
  if (error instanceof SupersededError || (run.fenced && options.signal?.aborted)) {
    // Stopped, cancelled, or overtaken: the job attempt says what becomes of the run; nothing is recorded here.
    const reason = error instanceof SupersededError ? error : options.signal?.reason;
    Object.assign(result, { status: 'failed' as const, records: progress.records, error: `interrupted: ${reason instanceof Error ? reason.message : String(reason)}` });
    deps.log.info({ run_id: runId, source, location, reason: result.error }, 'vulndb import interrupted');
    return result;
  }
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
  await recordFailure(deps, result, options, run.created, run.bytes, (trx) => ensureOwned(run, trx)).catch((e: unknown) =>
    deps.log.error({ err: e }, 'recording a failed vulndb import failed'),
  );
  deps.log.warn({ run_id: runId, source, location, error: failure.message, offset: failure.offset, record: failure.record }, 'vulndb import failed');
  return result;
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
  ensureOwned: (trx: Kysely<Database>) => Promise<void>,
  updateSource = true,
): Promise<ImportResult> {
  const { db, clock } = deps;
  const source = result.source!;
  await db.transaction().execute(async (trx) => {
    await ensureOwned(trx);
    const now = clock.now();
    await trx
      .updateTable('vulndb_import_runs')
      .set({
        status: 'unchanged',
        finished_at: now,
        heartbeat_at: now,
        bytes: info.bytes,
        sha256: info.sha256,
        records: result.records,
        unchanged: result.records,
        metadata: json(info.metadata),
      })
      .where('id', '=', result.run_id)
      .execute();
    if (!updateSource) return;
    await upsertSource(trx, source, now, { last_run_id: result.run_id, last_run_at: now, last_status: 'unchanged', last_error: null });
    await recordLocation(trx, result.location, source, info.sha256, now, false);
  });
  deps.log.info({ run_id: result.run_id, source, location: result.location }, 'vulndb import: content unchanged');
  return { ...result, status: 'unchanged', unchanged: result.records };
}

async function recordFailure(
  deps: ImportDeps,
  result: ImportResult,
  options: ImportOptions,
  created: boolean,
  bytes: number,
  ensureOwned: (trx: Kysely<Database>) => Promise<void>,
): Promise<void> {
  const { db, clock } = deps;
  const now = clock.now();
  const source = result.source;
  await db.transaction().execute(async (trx) => {
    try {
      await ensureOwned(trx);
    } catch (error) {
      // Another attempt carries out the run now: its outcome, not this one's, is the run's.
      if (error instanceof SupersededError) return;
      throw error;
    }
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
