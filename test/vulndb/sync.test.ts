import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { call, fresh, loginAdmin } from '../harness/identity.js';
import { Scheduler } from '../../src/platform/jobs/scheduler.js';
import { vulndbModule } from '../../src/modules/vulndb/module.js';
import { OFFICIAL_SOURCES, parseSourceSpecs } from '../../src/modules/vulndb/sync-job.js';
import { createOutboundPolicy } from '../../src/platform/outbound/index.js';
import { count, EPSS_KEV, EPSS_SAMPLE_GZ, KEV_JSON, NVD_FEED, OSV_NPM, readJson, scratchDir, silentLog, vulndbModules } from './helpers.js';

const HOUR = 3_600_000;

describe('sync sources configuration', () => {
  it('parses source=location lists, expands "official", refuses what it cannot use or the outbound guard refuses (no traffic)', () => {
    const guard = createOutboundPolicy();
    // A local mirror is reached only when the operator allow-lists it (CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS).
    const mirror = createOutboundPolicy({ allowHosts: ['127.0.0.1'] });
    const parse = (entries: string[], policy = guard) => parseSourceSpecs(entries, policy);
    expect(parse(['kev=/data/kev.json', 'nvd=/feeds/2024.json.gz', 'nvd=https://mirror.example.org/nvd/2025.json.gz', 'osv=file:///osv/npm'])).toEqual([
      { source: 'kev', location: '/data/kev.json' },
      { source: 'nvd', location: '/feeds/2024.json.gz' },
      { source: 'nvd', location: 'https://mirror.example.org/nvd/2025.json.gz' },
      { source: 'osv', location: 'file:///osv/npm' },
    ]);
    expect(parse(['official'])).toEqual(OFFICIAL_SOURCES);
    expect(OFFICIAL_SOURCES.every((s) => s.location.startsWith('https://'))).toBe(true);
    expect(parse(['epss=http://127.0.0.1:8000/epss.csv.gz'], mirror)).toHaveLength(1);
    expect(() => parse(['epss=http://127.0.0.1:8000/epss.csv.gz'])).toThrow(/the address is not allowed \(127\.0\.0\.1 is/);
    expect(() => parse(['kev=https://[::ffff:169.254.169.254]/kev.json'])).toThrow(/the address is not allowed/);
    expect(() => parse(['kev=http://example.org/kev.json'])).toThrow(/only https:\/\/ URLs are allowed/);
    expect(() => parse(['kev=ftp://example.org/kev.json'])).toThrow(/neither an https URL nor a local path/);
    expect(() => parse(['cisa=/x'])).toThrow(/<source>=<url-or-path>/);
    expect(() => parse(['kev=/a', 'kev=/b'])).toThrow(/kev may be given once/);
  });

  it('a bad CONTROLGRAPH_VULNDB_SOURCES stops the start with the reason', async () => {
    await expect(createTestApp({ extraModules: vulndbModules(), env: { CONTROLGRAPH_VULNDB_SOURCES: 'kev=http://example.org/kev.json' } })).rejects.toThrow(
      /only https:\/\/ URLs are allowed/,
    );
  });
});

describe('seed content and scheduled sync from local paths', () => {
  let t: TestApp;
  const tmp = scratchDir();
  let scheduler: Scheduler;
  let kevFile: string;

  beforeAll(async () => {
    const catalog = readJson(KEV_JSON);
    catalog.vulnerabilities.shift();
    catalog.count = catalog.vulnerabilities.length;
    catalog.catalogVersion = '2025.08.26';
    kevFile = tmp.write('kev-mirror.json', JSON.stringify(catalog));
    const osvDir = scratchDir();
    tmp.write('unused', '');
    const npm = readJson(OSV_NPM);
    osvDir.write('npm-1.json', JSON.stringify(npm.slice(0, 200)));
    osvDir.write('npm-2.json', JSON.stringify(npm.slice(200)));
    t = await createTestApp({
      extraModules: vulndbModules(),
      env: { CONTROLGRAPH_VULNDB_SOURCES: `kev=${kevFile}, nvd=${NVD_FEED}, osv=${osvDir.dir}`, CONTROLGRAPH_VULNDB_INTERVAL: '6h', CONTROLGRAPH_VULNDB_SEED: 'on' },
    });
    scheduler = new Scheduler({ db: t.deps.database.db, clock: t.clock, log: silentLog, schedules: vulndbModule.schedules!(t.deps) });
  });
  afterAll(async () => {
    await t.close();
    tmp.remove();
  });

  it('a fresh store queues the shipped KEV/EPSS snapshot at start; it loads on the queue, once', async () => {
    const admin = await loginAdmin(t);
    const seeds = await t.deps.database.db.selectFrom('jobs').select(['id', 'status']).where('kind', '=', 'vulndb.seed').execute();
    expect(seeds).toEqual([{ id: expect.any(String), status: 'queued' }]);
    expect((await call(t.app, admin.token, { url: '/api/v1/vulndb/cve/CVE-2021-44228' })).statusCode).toBe(404);
    await t.worker.drain();
    const record = (await call(t.app, admin.token, { url: '/api/v1/vulndb/cve/CVE-2021-44228', expect: 200 })).json();
    expect(record).toMatchObject({ is_kev: true, kev_date_added: '2021-12-10', epss_score: expect.any(Number) });
    const stats = (await call(t.app, admin.token, { url: '/api/v1/vulndb/stats', expect: 200 })).json();
    expect(stats.sources.slice(0, 2)).toMatchObject([
      { source: 'kev', records: 1404, origin: 'seed', data_version: '2025.08.25', last_result: 'succeeded' },
      { source: 'epss', records: 1404, origin: 'seed', last_result: 'succeeded' },
    ]);
    // A restart finds the store filled: no second seed.
    await vulndbModule.onStart!(t.deps);
    expect(await t.deps.database.db.selectFrom('jobs').select('id').where('kind', '=', 'vulndb.seed').execute()).toHaveLength(1);
  });

  it('the schedule fires a sync every 6 hours; the first replaces the seed, the next finds nothing changed', async () => {
    await scheduler.register();
    expect(await scheduler.tick()).toEqual(['vulndb-sync']);
    await t.worker.drain();
    const runs = await t.deps.database.db.selectFrom('vulndb_import_runs').selectAll().where('trigger', '=', 'schedule').orderBy('seq').execute();
    expect(runs.map((r) => [r.source, r.status, r.records])).toEqual([
      ['kev', 'succeeded', 1403],
      ['nvd', 'succeeded', 70],
      ['osv', 'succeeded', 417],
    ]);
    expect(runs[0]).toMatchObject({ inserted: 0, deleted: 1, unchanged: 1403 });
    expect(await count(t.deps.database.db, 'vulndb_kev')).toBe(1403);
    const kev = await t.deps.database.db.selectFrom('vulndb_sources').selectAll().where('source', '=', 'kev').executeTakeFirstOrThrow();
    expect(kev).toMatchObject({ origin: 'schedule', location: kevFile, data_version: '2025.08.26' });
    // The seed never comes back over synced data.
    expect(await count(t.deps.database.db, 'vulndb_epss')).toBe(1404);

    t.clock.advance(HOUR);
    expect(await scheduler.tick()).toEqual([]);
    t.clock.advance(5 * HOUR);
    expect(await scheduler.tick()).toEqual(['vulndb-sync']);
    await t.worker.drain();
    const second = await t.deps.database.db.selectFrom('vulndb_import_runs').selectAll().where('trigger', '=', 'schedule').orderBy('seq').execute();
    expect(second.slice(3).map((r) => [r.source, r.status])).toEqual([
      ['kev', 'unchanged'],
      ['nvd', 'unchanged'],
      ['osv', 'unchanged'],
    ]);
    const jobs = await t.deps.database.db.selectFrom('jobs').select(['status', 'result']).where('kind', '=', 'vulndb.sync').execute();
    expect(jobs.map((j) => j.status)).toEqual(['succeeded', 'succeeded']);
  });
});

describe('sync from http URLs (a loopback mirror)', () => {
  let t: TestApp;
  let server: Server;
  let base: string;
  const requests: Array<{ url: string; ifNoneMatch: string | undefined }> = [];
  let kevBody = readFileSync(KEV_JSON);
  let kevStatus = 200;
  const epssBody = readFileSync(EPSS_SAMPLE_GZ);

  const etag = (body: Buffer) => `"${createHash('sha1').update(body).digest('hex')}"`;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push({ url: req.url ?? '', ifNoneMatch: req.headers['if-none-match'] });
      const body = req.url === '/kev.json' ? kevBody : req.url === '/epss.csv.gz' ? epssBody : null;
      if (!body) return res.writeHead(404).end();
      if (req.url === '/kev.json' && kevStatus !== 200) return res.writeHead(kevStatus).end('upstream trouble');
      if (req.headers['if-none-match'] === etag(body)) return res.writeHead(304).end();
      res.writeHead(200, { etag: etag(body), 'content-type': 'application/octet-stream' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await createTestApp({
      extraModules: vulndbModules(),
      // The local mirror is allow-listed, as an operator's would be.
      env: { CONTROLGRAPH_VULNDB_SOURCES: `kev=${base}/kev.json,epss=${base}/epss.csv.gz`, CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' },
    });
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => server.close(resolve));
  });

  async function sync(): Promise<any> {
    const admin = await fresh(t, await loginAdmin(t));
    const job = (await call(t.app, admin.token, { method: 'POST', url: '/api/v1/vulndb/sync', expect: 202 })).json();
    await t.worker.drain();
    return (await call(t.app, admin.token, { url: job.status_url, expect: 200 })).json();
  }

  it('downloads and imports both sources, gzip included', async () => {
    const job = await sync();
    expect(job).toMatchObject({ status: 'succeeded' });
    expect(job.runs.map((r: any) => [r.source, r.status, r.records, r.location])).toEqual([
      ['kev', 'succeeded', 1404, `${base}/kev.json`],
      ['epss', 'succeeded', 20000, `${base}/epss.csv.gz`],
    ]);
    expect(job.runs[1].bytes).toBe(epssBody.length);
    expect(await count(t.deps.database.db, 'vulndb_epss')).toBe(20000);
  });

  it('an unchanged remote file is not downloaded again (ETag, 304)', async () => {
    requests.length = 0;
    const job = await sync();
    expect(job.runs.map((r: any) => [r.source, r.status, r.bytes])).toEqual([
      ['kev', 'unchanged', 0],
      ['epss', 'unchanged', 0],
    ]);
    expect(requests.map((r) => r.ifNoneMatch)).toEqual([etag(kevBody), etag(epssBody)]);
  });

  it('a cut-off download fails the run and keeps the data; the retry redoes only that source', async () => {
    kevBody = readFileSync(KEV_JSON).subarray(0, 700_000);
    const admin = await fresh(t, await loginAdmin(t));
    const started = (await call(t.app, admin.token, { method: 'POST', url: '/api/v1/vulndb/sync', expect: 202 })).json();
    await t.worker.drain();
    const failed = (await call(t.app, admin.token, { url: started.status_url, expect: 200 })).json();
    // The first attempt failed; the job waits for its retry.
    expect(failed).toMatchObject({ status: 'queued', attempts: 1 });
    expect(failed.error).toMatch(/^vulndb sync: kev http:\/\/127\.0\.0\.1:\d+\/kev\.json: /);
    expect(failed.runs.map((r: any) => [r.source, r.status])).toEqual([
      ['kev', 'failed'],
      ['epss', 'unchanged'],
    ]);
    expect(failed.runs[0].error_offset).toBeGreaterThan(0);
    expect(failed.runs[0].error_offset).toBeLessThanOrEqual(700_000);
    expect(failed.runs[0].error_record).toBeGreaterThan(0);
    expect(await count(t.deps.database.db, 'vulndb_kev')).toBe(1404);
    const stats = (await call(t.app, admin.token, { url: '/api/v1/vulndb/stats', expect: 200 })).json();
    expect(stats.sources[0]).toMatchObject({ source: 'kev', records: 1404, last_result: 'failed', last_error: failed.runs[0].error });

    kevBody = readFileSync(KEV_JSON);
    kevStatus = 503;
    t.clock.advance(61_000);
    await t.worker.drain();
    const unavailable = (await call(t.app, admin.token, { url: started.status_url, expect: 200 })).json();
    expect(unavailable).toMatchObject({ status: 'queued', attempts: 2 });
    expect(unavailable.runs.map((r: any) => [r.source, r.status])).toEqual([
      ['kev', 'failed'],
      ['epss', 'unchanged'],
      ['kev', 'failed'],
    ]);
    expect(unavailable.runs[2].error).toMatch(/HTTP 503/);

    kevStatus = 200;
    t.clock.advance(5 * 60_000);
    await t.worker.drain();
    const done = (await call(t.app, admin.token, { url: started.status_url, expect: 200 })).json();
    expect(done).toMatchObject({ status: 'succeeded', attempts: 3 });
    expect(done.runs.map((r: any) => [r.source, r.status])).toEqual([
      ['kev', 'failed'],
      ['epss', 'unchanged'],
      ['kev', 'failed'],
      ['kev', 'unchanged'],
    ]);
  });

  it('another file imported by hand in between makes the next sync apply the mirror again', async () => {
    const run = (await import('./helpers.js')).importer(t.deps.database.db, t.clock);
    expect((await run(EPSS_KEV)).status).toBe('succeeded');
    expect(await count(t.deps.database.db, 'vulndb_epss')).toBe(1404);
    const job = await sync();
    expect(job.runs.map((r: any) => [r.source, r.status])).toEqual([
      ['kev', 'unchanged'],
      ['epss', 'succeeded'],
    ]);
    expect(await count(t.deps.database.db, 'vulndb_epss')).toBe(20000);
  });
});
