import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { AppDeps } from './deps.js';
import { buildApp } from './app.js';
import { modules as allModules } from './modules/index.js';
import type { Module } from './modules/module.js';
import { systemModule } from './modules/system/module.js';
import { systemClock, type Clock } from './platform/clock.js';
import { openDatabase } from './platform/db/database.js';
import { migrate } from './platform/db/migrator.js';
import { openArtifactStore } from './platform/artifacts/index.js';
import { createMetrics } from './platform/metrics.js';
import { createLogger } from './platform/logger.js';
import { Worker } from './platform/jobs/worker.js';
import { Scheduler } from './platform/jobs/scheduler.js';
import { VERSION } from './version.js';
import { loadTokenKey } from './platform/auth/token-secret.js';
import { AuthCache } from './platform/auth/auth-cache.js';
import { createDbRateLimiter } from './platform/ratelimit/db-limiter.js';
import { createRedisRateLimiter } from './platform/ratelimit/redis-limiter.js';
import type { RateLimiter } from './platform/ratelimit/limiter.js';
import type { DatabaseHandle } from './platform/db/database.js';

export interface OpenDepsOptions {
  clock?: Clock;
  log?: Logger;
  defaultMetrics?: boolean;
  /** What this process is, recorded with an embedded database's lock (see platform/db/directory-lock.ts). */
  owner?: string;
}

/** Opens the database (migrated), the artifact store and the shared services of one process. */
export async function openDeps(config: Config, options: OpenDepsOptions = {}): Promise<AppDeps> {
  const log = options.log ?? createLogger(config.logLevel);
  const database = await openDatabase(config.databaseUrl, { owner: options.owner });
  try {
    const { applied } = await migrate(database.db);
    if (applied.length) log.info({ applied }, 'migrations applied');
  } catch (error) {
    await database.close();
    throw error;
  }
  const clock = options.clock ?? systemClock;
  return assembleDeps(config, database, clock, log, createMetrics({ defaultMetrics: options.defaultMetrics }));
}

/** The shared services of a process around an open, migrated database. */
export function assembleDeps(config: Config, database: DatabaseHandle, clock: Clock, log: Logger, metrics: AppDeps['metrics']): AppDeps {
  let tokenKey: Promise<Uint8Array> | null = null;
  return {
    config,
    database,
    clock,
    artifacts: openArtifactStore(config.artifactStore),
    log,
    metrics,
    startedAt: clock.now(),
    version: VERSION,
    tokenKey: () => (tokenKey ??= loadTokenKey(database.db, config.secret)),
    rateLimiter: createRateLimiter(config, database),
    authCache: new AuthCache(),
  };
}

function createRateLimiter(config: Config, database: DatabaseHandle): RateLimiter | null {
  if (!config.rateLimitsEnabled) return null;
  return config.redisUrl ? createRedisRateLimiter(config.redisUrl) : createDbRateLimiter(database.db);
}

export function createWorker(deps: AppDeps, modules: Module[] = allModules): Worker {
  return new Worker({
    db: deps.database.db,
    clock: deps.clock,
    log: deps.log.child({ component: 'worker' }),
    notifier: deps.database.notifier,
    definitions: modules.flatMap((m) => m.jobs?.(deps) ?? []),
    concurrency: deps.config.workerConcurrency,
    pollMs: deps.config.workerPollMs,
    onOutcome: (kind, outcome) => deps.metrics.jobOutcomes.inc({ kind, outcome }),
  });
}

export function createScheduler(deps: AppDeps, modules: Module[] = allModules): Scheduler {
  return new Scheduler({
    db: deps.database.db,
    clock: deps.clock,
    log: deps.log.child({ component: 'scheduler' }),
    schedules: modules.flatMap((m) => m.schedules?.(deps) ?? []),
  });
}

export interface RunningService {
  deps: AppDeps;
  app: FastifyInstance;
  worker: Worker | null;
  scheduler: Scheduler | null;
  address: string;
  stop(): Promise<void>;
}

/** Starts the parts of the service this process plays (`config.roles`). */
export async function startService(config: Config, options: OpenDepsOptions = {}): Promise<RunningService> {
  const deps = await openDeps(config, { defaultMetrics: true, ...options });
  for (const module of allModules) await module.onStart?.(deps);

  // A worker or scheduler process still answers /healthz, /metrics and /api/v1/status on its port, so
  // the orchestrator's health checks and the metrics scraper treat every process alike.
  const app = await buildApp(deps, config.roles.has('api') ? {} : { modules: [systemModule] });
  const worker = config.roles.has('worker') ? createWorker(deps) : null;
  const scheduler = config.roles.has('scheduler') ? createScheduler(deps) : null;
  await worker?.start();
  await scheduler?.start();
  const address = await app.listen({ port: config.port, host: config.host });
  // A CLI command beside this process finds the API here instead of opening the embedded files.
  if (config.roles.has('api')) await deps.database.lock?.update({ url: loopbackUrl(address) });

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      // Order matters: stop taking requests (in-flight ones finish), then stop claiming jobs and let
      // running ones finish or hand them back, then close the database.
      await app.close();
      await scheduler?.stop();
      await worker?.stop();
      await deps.rateLimiter?.close();
      await deps.database.close();
    })());
  return { deps, app, worker, scheduler, address, stop };
}

/** The listening address as a URL this host can reach (a wildcard listener answers on loopback). */
function loopbackUrl(address: string): string {
  const url = new URL(address);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  else if (url.hostname === '[::]') url.hostname = '[::1]';
  return url.origin;
}
