import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import type { AppDeps } from '../../src/deps.js';
import { buildApp } from '../../src/app.js';
import { modules as allModules } from '../../src/modules/index.js';
import type { Module } from '../../src/modules/module.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createMetrics } from '../../src/platform/metrics.js';
import { loggerOptions } from '../../src/platform/logger.js';
import { assembleDeps, createWorker } from '../../src/runtime.js';
import type { Worker } from '../../src/platform/jobs/worker.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/** The bootstrap system-admin of every test app. */
export const ADMIN_USERNAME = 'admin';
export const ADMIN_PASSWORD = 'admin-password-for-tests';

export interface TestAppOptions {
  env?: Record<string, string>;
  config?: Partial<Config>;
  /** Extra modules (e.g. a route that throws) added after the real ones. */
  extraModules?: Module[];
  clockStart?: string;
  /** Artifact store URL; defaults to a temporary directory. */
  artifactStore?: string;
  log?: pino.Logger;
  /** Collect prom-client's process and Node.js metrics, as `serve` does. */
  defaultMetrics?: boolean;
}

export interface TestApp {
  app: FastifyInstance;
  deps: AppDeps;
  db: TestDatabase;
  clock: ManualClock;
  worker: Worker;
  modules: Module[];
  /** Runs every due background job to completion. */
  drain(): Promise<number>;
  close(): Promise<void>;
}

/**
 * A real app over a real, fresh database (PGlite or PostgreSQL by test project), a manual clock and a
 * temporary artifact directory. Requests go through app.inject.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const db = await createTestDatabase();
  const artifactDir = mkdtempSync(join(tmpdir(), 'cg-artifacts-'));
  const config: Config = {
    // Rate limits are off unless a test turns them on: most tests make many requests in one instant.
    ...loadConfig({
      LOG_LEVEL: 'silent',
      CONTROLGRAPH_RATE_LIMITS: 'off',
      // The shipped KEV/EPSS seed would queue a job in every test app; the tests that want it turn it on.
      CONTROLGRAPH_VULNDB_SEED: 'off',
      CONTROLGRAPH_ADMIN_USERNAME: ADMIN_USERNAME,
      CONTROLGRAPH_ADMIN_PASSWORD: ADMIN_PASSWORD,
      ...options.env,
    }),
    databaseUrl: db.url,
    artifactStore: options.artifactStore ?? `file://${artifactDir}`,
    ...options.config,
  };
  const clock = new ManualClock(options.clockStart ?? '2026-11-23T12:00:00.000Z');
  const deps: AppDeps = assembleDeps(config, db.handle, clock, options.log ?? pino(loggerOptions(config.logLevel)), createMetrics({ defaultMetrics: options.defaultMetrics }));
  const modules = [...allModules, ...(options.extraModules ?? [])];
  for (const module of modules) await module.onStart?.(deps);
  const app = await buildApp(deps, { modules });
  const worker = createWorker(deps, modules);
  return {
    app,
    deps,
    db,
    clock,
    worker,
    modules,
    drain: () => worker.drain(),
    async close() {
      await app.close();
      await worker.stop(0);
      await deps.rateLimiter?.close();
      await db.dispose();
      rmSync(artifactDir, { recursive: true, force: true });
    },
  };
}
