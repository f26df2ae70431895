import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, loginAdmin, type Session, type TenantFixture } from '../harness/identity.js';
import { vulndbCommand } from '../../src/cli/vulndb.js';
import { importLocation } from '../../src/modules/vulndb/import/importer.js';
import { count, EPSS_KEV, scratchDir, silentLog, vulndbModules } from './helpers.js';

/**
 * The vulndb.import job when it does not simply run to its end (issue 20 item 2): a worker that stops
 * or loses its lease mid-import, and a cancelled import. The real job queue and worker over a real
 * database and artifact store; the manual clock moves leases on.
 */
let t: TestApp;
let system: Session;
let tenant: TenantFixture;
const tmp = scratchDir();

/** An EPSS file large enough to be staged in many batches (2,000 rows each): there is a "mid-import". */
const ROWS = 40_000;
function bigEpss(seed: number): Buffer {
  const lines = ['cve,epss,percentile'];
  for (let i = 0; i < ROWS; i++) lines.push(`CVE-2031-${100000 + i},0.${String(seed).padStart(2, '0')}043,0.09800`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

beforeAll(async () => {
  // A 20 ms poll for the worker's own loop (the stop test runs it); everything else uses drain().
  t = await createTestApp({ extraModules: vulndbModules(), env: { CONTROLGRAPH_WORKER_POLL_MS: '20' } });
  system = await loginAdmin(t);
  tenant = await buildTenant(t);
  // The previous data an interrupted import must leave as it was.
  const first = await upload('epss-kev-subset.csv', readFileSync(EPSS_KEV));
  await t.drain();
  expect((await getRun(first.id)).status).toBe('succeeded');
});
afterAll(async () => {
  await t?.close();
  tmp.remove();
});

const db = () => t.deps.database.db;

function multipart(filename: string, content: Buffer) {
  const boundary = `----cg-vulndb-${Math.random().toString(16).slice(2)}`;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

async function upload(filename: string, content: Buffer): Promise<{ id: string; job_id: string }> {
  const res = await call(t.app, system.token, { method: 'POST', url: '/api/v1/vulndb/imports', ...multipart(filename, content) });
  expect(res.statusCode, res.body).toBe(202);
  return res.json();
}

async function getRun(id: string) {
  return (await call(t.app, system.token, { url: `/api/v1/vulndb/imports/${id}` })).json();
}

const cancel = (id: string, token = system.token) => call(t.app, token, { method: 'POST', url: `/api/v1/vulndb/imports/${id}/cancel` });

async function job(id: string) {
  return db().selectFrom('jobs').select(['status', 'attempts', 'lease_owner']).where('id', '=', id).executeTakeFirstOrThrow();
}

/** The live EPSS data, summed up: equal before and after means unchanged. */
async function liveEpss(): Promise<{ n: number; total: number }> {
  const row = await sql<{ n: number; total: number }>`SELECT count(*)::int AS n, coalesce(sum(epss), 0)::float AS total FROM vulndb_epss`.execute(db());
  return row.rows[0]!;
}

const staged = () => count(db(), 'vulndb_epss_stage');

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Early in the import: some batches staged, most still to come. */
const midImport = () => until(async () => (await staged()) > 0, 'the first staged batch');

/** Artifact files left under vulndb/uploads. */
function uploadsLeft(): string[] {
  const root = join(fileURLToPath(t.deps.config.artifactStore), 'vulndb', 'uploads');
  try {
    return readdirSync(root, { recursive: true })
      .map(String)
      .filter((name) => statSync(join(root, name)).isFile());
  } catch {
    return [];
  }
}

describe('a worker that stops mid-import', () => {
  it('lost lease: the run goes back to queued with nothing applied; the job runs again to completion, every record once', async () => {
    const before = await liveEpss();
    const queued = await upload('epss-big-1.csv', bigEpss(1));
    const draining = t.drain();
    await midImport();
    // Another worker takes the job over, as one does a job whose lease expired: new token, new lease.
    await sql`UPDATE jobs SET lease_token = gen_random_uuid(), lease_owner = 'other-worker',
      lease_expires_at = ${t.clock.now()}::timestamptz + interval '2 minutes' WHERE id = ${queued.job_id}::uuid`.execute(db());
    await draining;
    // The first worker noticed at its next batch: the run is queued again, its staged rows gone, nothing applied.
    expect(await getRun(queued.id)).toMatchObject({ status: 'queued', records: 0, inserted: 0, error: null, finished_at: null });
    expect(await staged()).toBe(0);
    expect(await liveEpss()).toEqual(before);
    expect(await job(queued.job_id)).toMatchObject({ status: 'running', attempts: 1, lease_owner: 'other-worker' });
    expect(uploadsLeft()).toHaveLength(1);

    // That worker dies too: once its lease expires, the queue hands the job out again and it completes.
    t.clock.advance(3 * 60_000);
    await t.drain();
    expect(await getRun(queued.id)).toMatchObject({ status: 'succeeded', source: 'epss', records: ROWS, inserted: ROWS, updated: 0, deleted: before.n, unchanged: 0 });
    expect(await liveEpss()).toMatchObject({ n: ROWS });
    expect(await staged()).toBe(0);
    expect(await job(queued.job_id)).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(uploadsLeft()).toEqual([]);
  });

  it('graceful stop: the job is released without counting the attempt, the run goes back to queued, and the next worker completes it', async () => {
    const before = await liveEpss();
    const queued = await upload('epss-big-2.csv', bigEpss(2));
    await t.worker.start();
    await midImport();
    await t.worker.stop(0);
    // The stopped handler notices at its next batch and hands the run back.
    await until(async () => (await getRun(queued.id)).status === 'queued', 'the run to be queued again');
    expect(await job(queued.job_id)).toMatchObject({ status: 'queued', attempts: 0 });
    await until(async () => (await staged()) === 0, 'the stopped attempt to drop its staged rows');
    expect(await liveEpss()).toEqual(before);

    await t.drain();
    expect(await getRun(queued.id)).toMatchObject({ status: 'succeeded', records: ROWS, inserted: 0, updated: ROWS, unchanged: 0, deleted: 0 });
    expect(await liveEpss()).toMatchObject({ n: ROWS });
    expect(await job(queued.job_id)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('an attempt whose run another attempt took over applies nothing and records nothing; the run is carried out once', async () => {
    const before = await liveEpss();
    const queued = await upload('epss-big-3.csv', bigEpss(3));
    const draining = t.drain();
    await midImport();
    // What a second attempt does first when it starts (its own staging id on the run), while the first
    // one, whose worker is slow rather than dead, still holds the job's lease and goes on to the end.
    await db().updateTable('vulndb_import_runs').set({ stage_id: '00000000-0000-4000-8000-00000000beef' }).where('id', '=', queued.id).execute();
    await draining;
    expect(await liveEpss()).toEqual(before);
    expect(await getRun(queued.id)).toMatchObject({ status: 'running', inserted: 0, updated: 0, error: null });
    // Its upload is still there for the attempt that carries the run out.
    expect(uploadsLeft()).toHaveLength(1);
    expect(await staged()).toBe(0);

    t.clock.advance(60_000);
    await t.drain();
    expect(await getRun(queued.id)).toMatchObject({ status: 'succeeded', records: ROWS, updated: ROWS, inserted: 0 });
    expect(await liveEpss()).toMatchObject({ n: ROWS });
    expect(uploadsLeft()).toEqual([]);
  });
});

describe('POST /api/v1/vulndb/imports/{id}/cancel', () => {
  it('a running import stops at its next batch: the run says cancelled, the previous data is unchanged, the upload removed', async () => {
    const before = await liveEpss();
    const queued = await upload('epss-big-4.csv', bigEpss(4));
    const draining = t.drain();
    await midImport();
    const res = await cancel(queued.id);
    expect(res.statusCode, res.body).toBe(200);
    // The worker has not noticed yet.
    expect(res.json()).toMatchObject({ id: queued.id, status: 'running' });
    await draining;
    const run = await getRun(queued.id);
    expect(run).toMatchObject({ status: 'cancelled', inserted: 0, updated: 0, deleted: 0, error: null });
    expect(run.finished_at).not.toBeNull();
    expect(await liveEpss()).toEqual(before);
    expect(await staged()).toBe(0);
    expect(await job(queued.job_id)).toMatchObject({ status: 'cancelled' });
    expect(uploadsLeft()).toEqual([]);
    const stats = (await call(t.app, system.token, { url: '/api/v1/vulndb/stats' })).json();
    expect(stats.sources.find((s: { source: string }) => s.source === 'epss')).toMatchObject({ records: before.n, last_result: 'succeeded' });
    const audit = await db().selectFrom('audit_logs').select(['action', 'details']).where('target_id', '=', queued.id).where('action', '=', 'vulndb.import_cancelled').execute();
    expect(audit).toHaveLength(1);

    const again = await cancel(queued.id);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.message).toBe('the import is cancelled already: nothing to cancel');
  });

  it('a queued import is cancelled at once; its job never runs', async () => {
    const before = await liveEpss();
    const queued = await upload('epss-kev-subset.csv', readFileSync(EPSS_KEV));
    const res = await cancel(queued.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'cancelled', finished_at: expect.any(String) });
    expect(uploadsLeft()).toEqual([]);
    expect(await t.drain()).toBe(0);
    expect(await getRun(queued.id)).toMatchObject({ status: 'cancelled', records: 0 });
    expect(await liveEpss()).toEqual(before);
    const filtered = (await call(t.app, system.token, { url: '/api/v1/vulndb/imports?status=cancelled' })).json();
    expect(filtered.items.map((r: { id: string }) => r.id)).toContain(queued.id);
  });

  it('409 for a finished import and for one not made through the API; 404 unknown; 403 for a tenant-admin', async () => {
    const done = (await call(t.app, system.token, { url: '/api/v1/vulndb/imports?status=succeeded&per_page=1' })).json().items[0];
    const finished = await cancel(done.id);
    expect(finished.statusCode).toBe(409);
    expect(finished.json().error.message).toBe('the import is succeeded already: nothing to cancel');
    const cli = await importLocation({ db: db(), clock: t.clock, log: silentLog }, EPSS_KEV, { trigger: 'cli' });
    const notApi = await cancel(cli.run_id);
    expect(notApi.statusCode).toBe(409);
    expect(notApi.json().error.message).toBe('only imports made through POST /vulndb/imports can be cancelled (this one was made by the command line)');
    expect((await cancel('00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    const queued = await upload('epss-kev-subset.csv', readFileSync(EPSS_KEV));
    expect((await cancel(queued.id, tenant.admin.token)).statusCode).toBe(403);
    expect((await getRun(queued.id)).status).toBe('queued');
    await t.drain();
  });

  it('controlgraph vulndb import --server, waiting for an import that gets cancelled, says so and fails', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const tokenFile = tmp.write('token', system.token);
    const file = tmp.write('epss-cli.csv', readFileSync(EPSS_KEV));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      // Settled as soon as the run is cancelled: caught here so it is never an unhandled rejection.
      const command = vulndbCommand(['import', file, '--server', base, '--token-file', tokenFile]).then(
        () => null,
        (error: unknown) => error as Error,
      );
      const queuedRun = () => db().selectFrom('vulndb_import_runs').select('id').where('location', '=', 'upload:epss-cli.csv').where('status', '=', 'queued').executeTakeFirst();
      await until(async () => (await queuedRun()) !== undefined, 'the CLI upload');
      expect((await cancel((await queuedRun())!.id)).statusCode).toBe(200);
      expect((await command)?.message).toBe(`import ${file}: cancelled; the previous data is unchanged`);
    } finally {
      stderr.mockRestore();
    }
  });
});
