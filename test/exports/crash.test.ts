import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import { createTestApp } from '../harness/app.js';
import { createDatabaseForChild, dbKind } from '../harness/database.js';
import { startServiceProcess, type ServiceProcess } from '../harness/service-process.js';
import { buildTenant, call, fresh } from '../harness/identity.js';
import { api, until } from '../harness/remote.js';
import { EXPORT_JOB } from '../../src/modules/exports/export-service.js';
import { EXPORT_LEASE_MS } from '../../src/modules/exports/export-job.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { assertNoFaultDamage, expectHealthy, expectHonestHealth, watchHealth } from '../harness/fault-checks.js';
import { estate, loadEstate } from './helpers.js';

/**
 * A worker that dies holding an export: the job is retried on lease expiry until its third attempt,
 * then failed with a reason. With real processes of the CLI killed with SIGKILL: on PostgreSQL
 * separate API and worker processes, on PGlite (one process per data directory) the whole service
 * process, restarted on the same directory. And within one process, where the dead worker is a
 * claim whose lease nobody renews, which also shows a later worker completing the retried export.
 * After each: /healthz honest (the API process's at every moment, where one outlives the kills), no
 * job left running past its lease, no outbox state change duplicated.
 */

const ADMIN = { username: 'crash-admin', password: 'crash-admin-password-1' };

/**
 * Service processes on a fresh database with the bootstrap admin and one artifact directory, for one
 * describe block: everything is killed and removed after it.
 */
function processFixture() {
  const processes: ServiceProcess[] = [];
  const artifacts = mkdtempSync(join(tmpdir(), 'cg-crash-artifacts-'));
  let dispose: (() => Promise<void>) | null = null;
  let databaseUrl = '';
  afterAll(async () => {
    for (const p of processes) await p.stop('SIGKILL');
    await dispose?.();
    rmSync(artifacts, { recursive: true, force: true });
  });
  return {
    async environment(extra: Record<string, string> = {}): Promise<Record<string, string>> {
      const db = await createDatabaseForChild();
      dispose = db.dispose;
      databaseUrl = db.url;
      return {
        DATABASE_URL: db.url,
        ARTIFACT_STORE: `file://${artifacts}`,
        CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username,
        CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password,
        CONTROLGRAPH_RATE_LIMITS: 'off',
        CONTROLGRAPH_WORKER_POLL_MS: '200',
        LOG_LEVEL: 'warn',
        ...extra,
      };
    },
    /** The database of environment(). */
    databaseUrl: () => databaseUrl,
    /** Files in the artifact directory. */
    artifactFiles: () =>
      readdirSync(artifacts, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name),
    async start(env: Record<string, string>, args?: string[]): Promise<ServiceProcess> {
      const p = await startServiceProcess(env, args);
      processes.push(p);
      return p;
    },
  };
}

/**
 * Not asserted (a known gap, reported): a worker killed while it streams the file leaves the store's
 * temporary `<key>.<uuid>.partial` behind (FileArtifactStore.put removes it only when the write fails
 * in-process), and nothing sweeps such files, also once the export failed for good. Whether a kill
 * lands inside the write is timing, so the test records what it finds.
 */
async function annotateLeftovers(ctx: TestContext, files: string[]) {
  const partial = files.filter((name) => name.endsWith('.partial'));
  if (partial.length) await ctx.annotate(`temporary files left in the artifact store by killed workers: ${partial.join(', ')}`);
}

describe.runIf(dbKind() === 'postgres')('crash: SIGKILL of worker processes (PostgreSQL, real CLI processes)', () => {
  const fixture = processFixture();

  it('retries the export after each killed worker and fails it after the third attempt', async (ctx) => {
    const env = await fixture.environment();
    // The API (and scheduler) process never runs jobs; each worker process also answers /healthz.
    const apiProcess = await fixture.start(env, ['--role', 'api,scheduler']);
    const session = await api(apiProcess.base, null, 'POST', '/api/v1/auth/token', ADMIN);
    const tenantId: string = session.tenant_id;
    // Big enough that rendering the PNG takes seconds: the kill lands while the job runs.
    const graph = estate(3000);
    for (let i = 0; i < graph.nodes.length; i += 5000)
      await api(apiProcess.base, session.token, 'POST', `/api/v1/tenants/${tenantId}/nodes`, { nodes: graph.nodes.slice(i, i + 5000) });
    await api(apiProcess.base, session.token, 'POST', `/api/v1/tenants/${tenantId}/edges`, { edges: graph.edges });
    const job = await api(apiProcess.base, session.token, 'POST', `/api/v1/tenants/${tenantId}/exports`, { kind: 'architecture_diagram', params: { format: 'png' } });
    const status = () => api(apiProcess.base, session.token, 'GET', job.status_url);
    // The API process outlives every kill: its /healthz must say healthy throughout.
    const health = watchHealth(apiProcess.base);

    for (let attempt = 1; attempt <= 3; attempt++) {
      const worker = await fixture.start(env, ['--role', 'worker,api']);
      const running = await until(
        `attempt ${attempt} running`,
        async () => {
          const s = await status();
          return s.status === 'running' && s.attempts === attempt ? s : undefined;
        },
        EXPORT_LEASE_MS + 60_000,
      );
      expect(running.finished_at).toBeNull();
      worker.child.kill('SIGKILL');
      expect(await worker.exited).toBeNull();
      // Killed mid-render: still running (its lease has not expired yet), nothing to download.
      const after = await status();
      expect(after).toMatchObject({ status: 'running', attempts: attempt });
      const download = await fetch(`${apiProcess.base}${job.status_url}/download`, { headers: { authorization: `Bearer ${session.token}` } });
      expect(download.status).toBe(409);
    }

    // A fourth worker finds the third lease expired: the job fails for good with the reason.
    const survivor = await fixture.start(env, ['--role', 'worker,api']);
    const failed = await until(
      'failed',
      async () => {
        const s = await status();
        return s.status === 'failed' ? s : undefined;
      },
      EXPORT_LEASE_MS + 60_000,
      250,
    );
    expect(failed.attempts).toBe(3);
    expect(failed.error).toBe('worker stopped unexpectedly; gave up after 3 attempts');
    expect(failed.finished_at).not.toBeNull();
    const download = await fetch(`${apiProcess.base}${job.status_url}/download`, { headers: { authorization: `Bearer ${session.token}` } });
    expect(download.status).toBe(409);

    expectHonestHealth(await health.stop(), { alwaysUp: true });
    await expectHealthy(survivor.base);
    const direct = new pg.Client({ connectionString: fixture.databaseUrl() });
    await direct.connect();
    try {
      await assertNoFaultDamage(direct, tenantId, { health: apiProcess.base });
    } finally {
      await direct.end();
    }
    await annotateLeftovers(ctx, fixture.artifactFiles());
  }, 300_000);
});

describe.runIf(dbKind() === 'pglite')('crash: SIGKILL of the service process (PGlite, real CLI processes)', () => {
  // PGlite admits one process per data directory, so the one process is API and worker at once: each
  // kill takes both down, and the next process on the same directory (recovering the database as
  // PostgreSQL does after a crash) is the worker that finds the lease expired.
  const fixture = processFixture();

  it('retries the export after each killed process and fails it after the third attempt', async (ctx) => {
    const env = await fixture.environment({ CONTROLGRAPH_VULNDB_SEED: 'off' });
    const boot = async () => {
      const p = await fixture.start(env);
      const session = await api(p.base, null, 'POST', '/api/v1/auth/token', ADMIN);
      return { p, session };
    };
    let { p, session } = await boot();
    const tenantId: string = session.tenant_id;
    const graph = estate(3000);
    await api(p.base, session.token, 'POST', `/api/v1/tenants/${tenantId}/nodes`, { nodes: graph.nodes });
    await api(p.base, session.token, 'POST', `/api/v1/tenants/${tenantId}/edges`, { edges: graph.edges });
    const job = await api(p.base, session.token, 'POST', `/api/v1/tenants/${tenantId}/exports`, { kind: 'architecture_diagram', params: { format: 'png' } });

    for (let attempt = 1; attempt <= 3; attempt++) {
      const running = await until(
        `attempt ${attempt} running`,
        async () => {
          const s = await api(p.base, session.token, 'GET', job.status_url);
          return s.status === 'running' && s.attempts === attempt ? s : undefined;
        },
        EXPORT_LEASE_MS + 60_000,
      );
      expect(running.finished_at).toBeNull();
      p.child.kill('SIGKILL');
      expect(await p.exited).toBeNull();
      ({ p, session } = await boot());
      // Nothing finished: the killed attempt's lease still holds (running), or the new process has
      // already taken the job over (running, next attempt), or after the third kill given it up.
      const after = await api(p.base, session.token, 'GET', job.status_url);
      expect(after.attempts).toBeGreaterThanOrEqual(attempt);
      expect(attempt === 3 ? ['running', 'failed'] : ['running']).toContain(after.status);
      const download = await fetch(`${p.base}${job.status_url}/download`, { headers: { authorization: `Bearer ${session.token}` } });
      expect(download.status).toBe(409);
    }

    // The process that came up after the third kill finds that lease expired and fails the job.
    const failed = await until(
      'failed',
      async () => {
        const s = await api(p.base, session.token, 'GET', job.status_url);
        return s.status === 'failed' ? s : undefined;
      },
      EXPORT_LEASE_MS + 60_000,
      250,
    );
    expect(failed).toMatchObject({ attempts: 3, error: 'worker stopped unexpectedly; gave up after 3 attempts' });
    expect(failed.finished_at).not.toBeNull();
    await expectHealthy(p.base);
    // PGlite admits one process: the service stops (as it would be) and the test opens the database.
    await p.stop();
    const database = await openDatabase(fixture.databaseUrl());
    try {
      await assertNoFaultDamage(database.db, tenantId);
    } finally {
      await database.close();
    }
    await annotateLeftovers(ctx, fixture.artifactFiles());
    // Four process starts and three lease expiries: about 70 s on an idle machine, far more on a busy one.
  }, 600_000);
});

describe.runIf(dbKind() === 'pglite')('crash: abandoned lease (PGlite, single process)', () => {
  it("a dead worker's export is retried by lease expiry; after three dead attempts it fails with a reason", async () => {
    const t = await createTestApp();
    try {
      const tenant = await buildTenant(t);
      await loadEstate(t, tenant.admin.token, tenant.id, estate(40));
      const db = t.deps.database.db;
      // What a worker killed mid-export leaves behind: the job claimed under a lease nobody renews,
      // the export row running (the same statements as the worker's claim and the job's first step).
      const abandon = async (id: string) => {
        const claimed = await sql`
          UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_token = gen_random_uuid(), lease_owner = 'dead-worker',
            lease_expires_at = ${t.clock.now()}::timestamptz + make_interval(secs => ${EXPORT_LEASE_MS / 1000}),
            started_at = coalesce(started_at, ${t.clock.now()})
          WHERE id = ${id} AND kind = ${EXPORT_JOB} AND attempts < max_attempts
            AND (status = 'queued' OR (status = 'running' AND lease_expires_at < ${t.clock.now()}))`.execute(db);
        expect(Number(claimed.numAffectedRows)).toBe(1);
        await db.updateTable('exports').set({ status: 'running', started_at: t.clock.now() }).where('id', '=', id).execute();
      };
      const start = async () =>
        (await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/exports`, payload: { kind: 'drawio' }, expect: 202 })).json();
      const status = async (job: { status_url: string }) => (await call(t.app, (await fresh(t, tenant.admin)).token, { url: job.status_url, expect: 200 })).json();

      // One dead attempt, then a live worker takes the job over once the lease expired.
      const retried = await start();
      await abandon(retried.job_id);
      expect(await t.drain()).toBe(0);
      expect(await status(retried)).toMatchObject({ status: 'running', attempts: 1 });
      t.clock.advance(EXPORT_LEASE_MS + 1);
      await t.drain();
      expect(await status(retried)).toMatchObject({ status: 'succeeded', attempts: 2 });

      // Three dead attempts: the reaper fails it for good and the export records why.
      const doomed = await start();
      for (let attempt = 1; attempt <= 3; attempt++) {
        await abandon(doomed.job_id);
        expect(await status(doomed)).toMatchObject({ status: 'running', attempts: attempt });
        t.clock.advance(EXPORT_LEASE_MS + 1);
      }
      await t.drain();
      const failed = await status(doomed);
      expect(failed).toMatchObject({ status: 'failed', attempts: 3, error: 'worker stopped unexpectedly; gave up after 3 attempts' });
      expect((await call(t.app, (await fresh(t, tenant.admin)).token, { url: `${doomed.status_url}/download` })).statusCode).toBe(409);
      await assertNoFaultDamage(t.deps.database.db, tenant.id, { now: t.clock.now(), health: t.app });
    } finally {
      await t.close();
    }
  });
});
