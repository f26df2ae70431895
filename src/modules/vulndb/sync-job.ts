import { existsSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import type { JobDefinition } from '../../platform/jobs/definition.js';
import { enqueueJob } from '../../platform/jobs/queue.js';
import { projectPath } from '../../platform/paths.js';
import type { ImportTrigger, VulnSource } from './tables.js';
import { isSource, SOURCES } from './import/detect.js';
import { checkUrl, isUrl } from './import/input.js';
import { outboundPolicyOf, type OutboundPolicy } from '../../platform/outbound/index.js';
import { importLocation, type ImportResult } from './import/importer.js';
import { importLimitsOf } from './import/archive.js';

/**
 * Where the store's data comes from, and the jobs that pull it.
 *
 * CONTROLGRAPH_VULNDB_SOURCES is a comma-separated list of `<source>=<location>`: source one of kev,
 * epss, nvd, osv; location an https URL (or http on loopback), a local file or directory, or a
 * file:// URL (air-gapped deployments mirror the feeds to disk). nvd and osv may be given several
 * times (a feed per year, an export per ecosystem); kev and epss once. The word `official` stands
 * for the published KEV catalog and the daily EPSS file.
 *
 * The `vulndb.sync` job imports every configured location in turn (scheduled every
 * CONTROLGRAPH_VULNDB_INTERVAL, default 6 h, and on POST /api/v1/vulndb/sync). Unchanged remote files
 * are not downloaded again (ETag / Last-Modified), unchanged content is not applied again (SHA-256).
 * A retried job skips the locations its earlier attempts already imported.
 *
 * The `vulndb.seed` job loads the dated KEV and EPSS snapshot shipped in content/vulndb into an empty
 * store, so a fresh install answers at once; the first sync of a source replaces its seed data.
 */
export interface SourceSpec {
  source: VulnSource;
  location: string;
}

export const OFFICIAL_SOURCES: SourceSpec[] = [
  { source: 'kev', location: 'https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json' },
  { source: 'epss', location: 'https://epss.empiricalsecurity.com/epss_scores-current.csv.gz' },
];

/**
 * The configured sources. URLs are checked against the outbound policy (what needs no DNS): a source
 * the guard would refuse stops the start with the reason rather than failing every sync.
 */
export function parseSourceSpecs(entries: readonly string[], policy: OutboundPolicy): SourceSpec[] {
  const specs: SourceSpec[] = [];
  for (const entry of entries) {
    if (entry.trim().toLowerCase() === 'official') {
      specs.push(...OFFICIAL_SOURCES);
      continue;
    }
    const eq = entry.indexOf('=');
    const source = eq > 0 ? entry.slice(0, eq).trim().toLowerCase() : '';
    const location = eq > 0 ? entry.slice(eq + 1).trim() : '';
    if (!isSource(source) || !location) {
      throw new Error(`CONTROLGRAPH_VULNDB_SOURCES: "${entry}" must be <source>=<url-or-path> with source one of ${SOURCES.join(', ')}, or "official"`);
    }
    if (isUrl(location)) {
      try {
        checkUrl(policy, location);
      } catch (error) {
        throw new Error(`CONTROLGRAPH_VULNDB_SOURCES: ${(error as Error).message}`);
      }
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location) && !location.startsWith('file://')) {
      throw new Error(`CONTROLGRAPH_VULNDB_SOURCES: "${location}" is neither an https URL nor a local path`);
    }
    specs.push({ source, location });
  }
  for (const single of ['kev', 'epss'] as const) {
    if (specs.filter((s) => s.source === single).length > 1) throw new Error(`CONTROLGRAPH_VULNDB_SOURCES: ${single} may be given once (it is a complete snapshot)`);
  }
  return specs;
}

/** A location as shown to API clients: URL credentials and query strings (tokens) are left out. */
export function displayLocation(location: string | null): string | null {
  if (!location || !isUrl(location)) return location;
  try {
    const url = new URL(location);
    url.username = '';
    url.password = '';
    url.search = '';
    return url.toString();
  } catch {
    return location;
  }
}

export const SYNC_JOB = 'vulndb.sync';
export const SEED_JOB = 'vulndb.seed';
export const SYNC_SCHEDULE = 'vulndb-sync';

export interface SyncPayload {
  trigger?: 'schedule' | 'manual';
  sources?: VulnSource[];
  requested_by?: string | null;
}

export interface SyncResult {
  runs: ImportResult[];
  skipped: string | null;
}

type SyncDeps = Pick<AppDeps, 'config' | 'log' | 'clock' | 'database'>;

/** Imports the configured locations (optionally only some sources); one import run each. */
export async function runSync(
  deps: SyncDeps,
  options: { trigger: ImportTrigger; sources?: readonly VulnSource[]; jobId?: string | null; signal?: AbortSignal; db?: Kysely<Database> },
): Promise<SyncResult> {
  const db = options.db ?? deps.database.db;
  const specs = parseSourceSpecs(deps.config.vulndbSources, outboundPolicyOf(deps.config)).filter((s) => !options.sources?.length || options.sources.includes(s.source));
  if (specs.length === 0) return { runs: [], skipped: 'no vulnerability sources configured (CONTROLGRAPH_VULNDB_SOURCES)' };
  // A retried job: locations an earlier attempt imported are done.
  const done = options.jobId
    ? new Set(
        (await db.selectFrom('vulndb_import_runs').select('location').where('job_id', '=', options.jobId).where('status', 'in', ['succeeded', 'unchanged']).execute()).map(
          (r) => r.location,
        ),
      )
    : new Set<string>();
  const runs: ImportResult[] = [];
  for (const spec of specs) {
    if (done.has(spec.location)) continue;
    options.signal?.throwIfAborted();
    runs.push(
      await importLocation({ db, clock: deps.clock, log: deps.log, outbound: outboundPolicyOf(deps.config), limits: importLimitsOf(deps.config) }, spec.location, {
        source: spec.source,
        trigger: options.trigger,
        jobId: options.jobId ?? null,
        signal: options.signal,
        skipUnchanged: true,
        conditional: true,
      }),
    );
  }
  return { runs, skipped: null };
}

export function syncJob(deps: SyncDeps): JobDefinition<SyncPayload> {
  return {
    kind: SYNC_JOB,
    // A full NVD import takes minutes; the worker renews the lease while it runs.
    leaseMs: 30 * 60_000,
    backoffMs: (attempt) => 60_000 * 4 ** (attempt - 1),
    async run(payload, ctx) {
      const trigger = payload.trigger === 'manual' ? 'manual' : 'schedule';
      const result = await runSync(deps, { trigger, sources: payload.sources, jobId: ctx.job.id, signal: ctx.signal, db: ctx.db });
      const failed = result.runs.filter((r) => r.status === 'failed');
      if (failed.length) {
        // The job fails (and is retried) so the queue shows it; each failure is also an import run.
        throw new Error(`vulndb sync: ${failed.map((f) => `${f.source} ${displayLocation(f.location)}: ${f.error}`).join('; ')}`);
      }
      return { runs: result.runs.map((r) => ({ run_id: r.run_id, source: r.source, status: r.status, records: r.records })), skipped: result.skipped };
    },
  };
}

export const SEED_FILES: SourceSpec[] = [
  { source: 'kev', location: projectPath('content', 'vulndb', 'known_exploited_vulnerabilities.json') },
  { source: 'epss', location: projectPath('content', 'vulndb', 'epss-kev-subset.csv') },
];

/** Loads the shipped snapshot into sources that were never imported. */
export async function runSeed(deps: SyncDeps, db: Kysely<Database> = deps.database.db, jobId: string | null = null): Promise<ImportResult[]> {
  const results: ImportResult[] = [];
  for (const spec of SEED_FILES) {
    const state = await db.selectFrom('vulndb_sources').select('last_success_at').where('source', '=', spec.source).executeTakeFirst();
    if (state?.last_success_at) continue;
    if (!existsSync(spec.location)) {
      deps.log.warn({ location: spec.location }, 'vulndb seed content missing');
      continue;
    }
    results.push(await importLocation({ db, clock: deps.clock, log: deps.log }, spec.location, { source: spec.source, trigger: 'seed', jobId, onlyIfNeverImported: true }));
  }
  return results;
}

export function seedJob(deps: SyncDeps): JobDefinition<Record<string, never>> {
  return {
    kind: SEED_JOB,
    leaseMs: 10 * 60_000,
    async run(_payload, ctx) {
      const runs = await runSeed(deps, ctx.db, ctx.job.id);
      return { runs: runs.map((r) => ({ run_id: r.run_id, source: r.source, status: r.status, records: r.records })) };
    },
  };
}

/** At start: queue the seed when a seeded source has never been imported (cheap check, no import here). */
export async function enqueueSeedIfEmpty(deps: SyncDeps): Promise<boolean> {
  const db = deps.database.db;
  const imported = await db
    .selectFrom('vulndb_sources')
    .select('source')
    .where(
      'source',
      'in',
      SEED_FILES.map((s) => s.source),
    )
    .where('last_success_at', 'is not', null)
    .execute();
  if (imported.length === SEED_FILES.length) return false;
  await enqueueJob(db, deps.clock, { kind: SEED_JOB, dedupeKey: 'vulndb-seed', maxAttempts: 3 });
  return true;
}
