import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import type { Config } from '../config.js';
import { openDatabase } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrator.js';
import { systemClock } from '../platform/clock.js';
import { createStderrLogger } from '../platform/logger.js';
import { isSource } from '../modules/vulndb/import/detect.js';
import { importLocation, type ImportResult } from '../modules/vulndb/import/importer.js';
import { importLimitsOf } from '../modules/vulndb/import/archive.js';
import { runSync } from '../modules/vulndb/sync-job.js';
import { createVulnService } from '../modules/vulndb/service.js';
import type { VulnSource } from '../modules/vulndb/tables.js';
import { isUrl, listDataFiles, localPath, locationKind } from '../modules/vulndb/import/input.js';
import { cveRiskFacts } from '../modules/vulndb/cve-risk-facts.js';
import { outboundPolicyOf } from '../platform/outbound/index.js';
import { provideCveRiskFacts, provideResourceCriticality } from '../modules/compliance/index.js';
import { resourceCriticality } from '../modules/applications/index.js';
import { parseOptions } from './args.js';
import { chooseTarget, readToken, REMOTE_HELP, REMOTE_OPTIONS, runLocalOrRemote, ServiceClient, ServiceError, sleep } from './remote.js';

export const vulndbHelp = `Usage: controlgraph vulndb import <file-or-dir-or-url> [--source kev|epss|nvd|osv] | sync [--source ...] | stats  [--server URL] [--token-file FILE]

Imports and syncs the vulnerability store (CISA KEV, FIRST EPSS, NVD, OSV) in DATABASE_URL.

  vulndb import <file-or-dir-or-url> [--source kev|epss|nvd|osv]
      Imports one file, a directory of NVD or OSV files, or an https URL: the KEV catalog (JSON or
      CSV), an EPSS score file (CSV, with or without its #model_version line), NVD CVE API 2.0 JSON
      (a yearly feed or an API page) or OSV JSON (one advisory, an array, a directory). The format is
      detected from the content unless --source is given; gzip is read transparently, zip and tar
      archives (osv.dev's all.zip, nvdcve-2.0-YYYY.json.zip, .tar.gz) entry by entry. KEV and EPSS
      files replace their data, NVD and OSV files are merged. A broken file changes nothing and the
      command says where it broke (exit status 1).
  vulndb sync [--source kev|epss|nvd|osv]
      Imports every location of CONTROLGRAPH_VULNDB_SOURCES now (or those of one source).
  vulndb stats
      Prints the records per source and the last import of each, as JSON.

Beside a running service on the same embedded (pglite://) database, or with --server URL, the command
goes through the service's API instead of opening the files: import uploads the file(s) to
POST /api/v1/vulndb/imports (a URL is fetched by the service) and waits for the import, sync asks
POST /api/v1/vulndb/sync (the service's own CONTROLGRAPH_VULNDB_SOURCES) and waits, stats reads
GET /api/v1/vulndb/stats. import and sync need a system-admin's token; stats any key or token.

${REMOTE_HELP}`;

function summary(result: ImportResult): string {
  if (result.status === 'failed') {
    const where = [
      result.error_offset !== null ? `byte ${result.error_offset}` : null,
      result.error_record !== null ? `after ${result.error_record} records` : null,
      result.error_context,
    ].filter(Boolean);
    return `${result.source ?? 'import'} ${result.location}: FAILED: ${result.error}${where.length ? ` (${where.join(', ')})` : ''}; the previous data is unchanged`;
  }
  if (result.status === 'unchanged') return `${result.source} ${result.location}: unchanged (${result.records} records)`;
  if (result.status === 'cancelled') return `${result.source ?? 'import'} ${result.location}: cancelled; the previous data is unchanged`;
  const findings = result.findings_escalated || result.findings_restored ? `; findings escalated ${result.findings_escalated}, restored ${result.findings_restored}` : '';
  return (
    `${result.source} ${result.location}: ${result.records} records read; ${result.inserted} inserted, ${result.updated} updated, ` +
    `${result.deleted} deleted, ${result.unchanged} unchanged${findings}`
  );
}

async function withDatabase<T>(config: Config, command: string, run: (deps: { db: Awaited<ReturnType<typeof openDatabase>>; config: Config }) => Promise<T>): Promise<T> {
  const database = await openDatabase(config.databaseUrl, { owner: `controlgraph vulndb ${command}` });
  try {
    await migrate(database.db);
    return await run({ db: database, config });
  } finally {
    await database.close();
  }
}

export async function vulndbCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positional } = parseOptions(rest, { values: ['source', ...REMOTE_OPTIONS] });
  const source = values.source;
  if (source !== undefined && !isSource(source)) throw new Error(`--source must be one of kev, epss, nvd, osv (got "${source}")`);
  if (sub !== 'import' && sub !== 'sync' && sub !== 'stats') throw new Error(`unknown vulndb command "${sub ?? ''}"\n\n${vulndbHelp}`);
  if (sub === 'import' && (!positional[0] || positional.length > 1)) throw new Error(`vulndb import takes one file, directory or URL\n\n${vulndbHelp}`);
  if (sub !== 'import' && positional.length) throw new Error(`vulndb ${sub} takes no arguments\n\n${vulndbHelp}`);
  const target = await chooseTarget(values);
  const client = (needs: string) => (remote: Parameters<typeof ServiceClient.open>[0]) => ServiceClient.open(remote, readToken(values), `vulndb ${sub}`, needs);
  const admin = client("a system-admin's access token");
  // A local import or sync rescores CVE findings, whose risk score weighs service criticality and the
  // store's KEV and EPSS facts (modules/index.ts does the same for the service).
  provideResourceCriticality(resourceCriticality);
  provideCveRiskFacts(cveRiskFacts);
  switch (sub) {
    case 'import': {
      const location = positional[0]!;
      const result = await runLocalOrRemote(
        target,
        (config) =>
          withDatabase(config, 'import', ({ db }) =>
            importLocation(
              { db: db.db, clock: systemClock, log: createStderrLogger(config.logLevel), outbound: outboundPolicyOf(config), limits: importLimitsOf(config) },
              location,
              {
                source: source as VulnSource | undefined,
                trigger: 'cli',
              },
            ),
          ),
        (remote) => importThroughApi(admin(remote), location, source as VulnSource | undefined),
      );
      if (result.status === 'failed' || result.status === 'cancelled') throw new Error(summary(result));
      console.log(summary(result));
      return;
    }
    case 'sync': {
      const outcome = await runLocalOrRemote(
        target,
        (config) =>
          withDatabase(config, 'sync', ({ db }) =>
            runSync(
              { config, database: db, clock: systemClock, log: createStderrLogger(config.logLevel) },
              { trigger: 'cli', sources: source ? [source as VulnSource] : undefined },
            ),
          ),
        (remote) => syncThroughApi(admin(remote), source as VulnSource | undefined),
      );
      if (outcome.skipped) {
        console.log(outcome.skipped);
        return;
      }
      for (const run of outcome.runs) console.log(summary(run));
      const failed = outcome.runs.filter((r) => r.status === 'failed');
      if (failed.length) throw new Error(`${failed.length} of ${outcome.runs.length} sources failed`);
      return;
    }
    case 'stats': {
      const stats = await runLocalOrRemote(
        target,
        (config) => withDatabase(config, 'stats', ({ db }) => createVulnService({ database: db, clock: systemClock, config }).stats()),
        async (remote) => (await client('an API key or access token')(remote).request<unknown>('GET', '/vulndb/stats')).body,
      );
      console.log(JSON.stringify(stats, null, 2));
      return;
    }
  }
}

/** An import run as the API shows it (GET /vulndb/imports/{id}). */
interface ApiRun extends Omit<ImportResult, 'run_id'> {
  id: string;
}

const FINISHED = new Set(['succeeded', 'unchanged', 'failed', 'cancelled']);

/** Polls an import run until it finishes, telling on stderr how far it is every few seconds. */
async function awaitRun(client: ServiceClient, id: string): Promise<ApiRun> {
  let told = Date.now();
  for (let delay = 200; ; delay = Math.min(delay * 2, 2_000)) {
    const { body: run } = await client.request<ApiRun & { bytes: number; size_bytes: number | null }>('GET', `/vulndb/imports/${id}`);
    if (FINISHED.has(run.status)) return run;
    if (Date.now() - told > 5_000) {
      told = Date.now();
      const size = run.size_bytes ? ` of ${run.size_bytes}` : '';
      process.stderr.write(`import ${id}: ${run.status}, ${run.bytes}${size} bytes and ${run.records} records read (it goes on if this command stops)\n`);
    }
    await sleep(delay);
  }
}

function asResult(run: ApiRun, location: string): ImportResult {
  const { id, ...rest } = run;
  return { ...rest, run_id: id, location };
}

/** Uploads a file or a directory's data files (a URL: the service fetches it) and waits for the import. */
async function importThroughApi(client: ServiceClient, location: string, source: VulnSource | undefined): Promise<ImportResult> {
  let accepted: ApiRun;
  if (isUrl(location)) {
    accepted = (await client.request<ApiRun>('POST', '/vulndb/imports', { json: { url: location, ...(source ? { source } : {}) } })).body;
  } else {
    const kind = await locationKind(location);
    const path = localPath(location);
    const files = kind === 'directory' ? await listDataFiles(path) : [path];
    if (files.length === 0) throw new Error(`no .json, .csv or .gz data files (or .zip, .tar, .tar.gz archives) in ${location}`);
    const form = new FormData();
    if (source) form.append('source', source);
    // Blobs backed by the files: fetch streams them, nothing is read into memory first.
    for (const file of files) form.append('file', await openAsBlob(file), kind === 'directory' ? file.slice(path.length + 1) : basename(file));
    try {
      accepted = (await client.request<ApiRun>('POST', '/vulndb/imports', { body: form })).body;
    } catch (error) {
      if (error instanceof ServiceError && error.status === 413) throw new Error(`${error.message} (the service's CONTROLGRAPH_VULNDB_UPLOAD_MAX_BYTES)`);
      throw error;
    }
  }
  process.stderr.write(`import ${accepted.id} accepted by ${client.remote.url} (${client.remote.reason}); waiting for it\n`);
  return asResult(await awaitRun(client, accepted.id), location);
}

interface SyncJobView {
  job_id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  attempts: number;
  error: string | null;
  runs: ApiRun[];
}

/** Asks the service to sync its configured sources and waits for the job (or its first failed attempt). */
async function syncThroughApi(client: ServiceClient, source: VulnSource | undefined): Promise<{ runs: ImportResult[]; skipped: string | null }> {
  let job: { job_id: string };
  try {
    job = (await client.request<{ job_id: string }>('POST', '/vulndb/sync', { query: { source } })).body;
  } catch (error) {
    // The service has no sources configured (409): said as the local sync says it.
    if (error instanceof ServiceError && error.status === 409) return { runs: [], skipped: error.message.replace(/^.*answered 409: /, '') };
    throw error;
  }
  for (let delay = 200; ; delay = Math.min(delay * 2, 2_000)) {
    const { body } = await client.request<SyncJobView>('GET', `/vulndb/sync/${job.job_id}`);
    const retrying = body.status === 'queued' && body.attempts > 0;
    if (body.status === 'succeeded' || body.status === 'failed' || body.status === 'cancelled' || retrying) {
      if (retrying) process.stderr.write(`sync job ${job.job_id} failed an attempt (${body.error ?? 'no reason'}); the service retries it later\n`);
      return { runs: body.runs.map((run) => asResult(run, run.location)), skipped: null };
    }
    await sleep(delay);
  }
}
