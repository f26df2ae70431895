import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, loginAdmin, type Session, type TenantFixture } from '../harness/identity.js';
import { count, EPSS_SAMPLE_GZ, gzipFile, KEV_CSV, KEV_JSON, NVD_FEED, OSV_DEBIAN_GZ, OSV_NPM, truncated, vulndbModules } from './helpers.js';

/**
 * POST /api/v1/vulndb/imports: vulnerability data through the API (issue 20 item 2). Real uploads of
 * the sample files, imported by the real job on the worker, over a real database and artifact store.
 */
const MAX_BYTES = 3 * 1024 * 1024;
let t: TestApp;
let system: Session;
let tenant: TenantFixture;
/** A local mirror for URL imports (allow-listed, as an operator's would be). */
let mirror: Server;
let mirrorBase: string;
const mirrorRequests: string[] = [];

beforeAll(async () => {
  mirror = createServer((req, res) => {
    mirrorRequests.push(req.url ?? '');
    if (req.url === '/kev.json') return res.writeHead(200, { 'content-type': 'application/json' }).end(readFileSync(KEV_JSON));
    if (req.url === '/elsewhere') return res.writeHead(302, { location: 'http://10.9.9.9/kev.json' }).end();
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => mirror.listen(0, '127.0.0.1', resolve));
  mirrorBase = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}`;
  t = await createTestApp({
    extraModules: vulndbModules(),
    env: { CONTROLGRAPH_VULNDB_UPLOAD_MAX_BYTES: String(MAX_BYTES), CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' },
    // No real DNS in tests: one name that resolves to a private address.
    config: { outboundLookup: async (host) => (host === 'internal.example' ? [{ address: '10.1.2.3', family: 4 }] : []) },
  });
  system = await loginAdmin(t);
  tenant = await buildTenant(t);
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => mirror?.close(resolve));
});

interface Part {
  name?: string;
  filename?: string;
  content: Buffer | string;
}

function multipart(parts: Part[]) {
  const boundary = `----cg-vulndb-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name ?? 'file'}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    const type = part.filename ? 'Content-Type: application/octet-stream\r\n' : '';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(part.content), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const file = (path: string, name = path.split('/').pop()!): Part => ({ filename: name, content: readFileSync(path) });

function upload(parts: Part[], token = system.token) {
  const body = multipart(parts);
  return call(t.app, token, { method: 'POST', url: '/api/v1/vulndb/imports', payload: body.payload, headers: body.headers });
}

const getRun = (id: string, token = system.token) => call(t.app, token, { url: `/api/v1/vulndb/imports/${id}` });

/** Artifact files left under vulndb/uploads (every upload is removed once imported or refused). */
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

async function runCount(): Promise<number> {
  return count(t.deps.database.db, 'vulndb_import_runs');
}

describe('POST /api/v1/vulndb/imports (multipart)', () => {
  it('GET /vulndb/stats says plainly that package matching is off while no package advisories are loaded', async () => {
    const stats = (await call(t.app, system.token, { url: '/api/v1/vulndb/stats' })).json();
    expect(stats.package_matching).toEqual({ enabled: false, message: expect.stringMatching(/^no package advisories are loaded \(OSV data\), so package matching is off/) });
  });

  it('202 with a queued import; the worker imports it; the run shows bytes and records read, inserted and updated', async () => {
    const size = statSync(KEV_JSON).size;
    const res = await upload([file(KEV_JSON)]);
    expect(res.statusCode).toBe(202);
    const queued = res.json();
    expect(queued).toMatchObject({
      status: 'queued',
      trigger: 'api',
      source: null,
      location: 'upload:known_exploited_vulnerabilities.json',
      size_bytes: size,
      bytes: 0,
      records: 0,
      requested_by: expect.any(String),
      job_id: expect.any(String),
    });
    expect((await getRun(queued.id)).json()).toMatchObject({ id: queued.id, status: 'queued' });
    expect(uploadsLeft()).toHaveLength(1);

    await t.drain();
    const done = (await getRun(queued.id)).json();
    expect(done).toMatchObject({ status: 'succeeded', source: 'kev', bytes: size, size_bytes: size, records: 1404, inserted: 1404, updated: 0, unchanged: 0, error: null });
    expect(done.finished_at).not.toBeNull();
    expect(await count(t.deps.database.db, 'vulndb_kev')).toBe(1404);
    // The upload is removed once imported.
    expect(uploadsLeft()).toEqual([]);

    // The same catalog as CSV, source forced: nothing new, every record unchanged.
    const csv = (await upload([{ name: 'source', content: 'kev' }, file(KEV_CSV)])).json();
    expect(csv).toMatchObject({ status: 'queued', source: 'kev' });
    await t.drain();
    expect((await getRun(csv.id)).json()).toMatchObject({ status: 'succeeded', source: 'kev', records: 1404, inserted: 0, updated: 0, unchanged: 1404 });

    const audit = await t.deps.database.db.selectFrom('audit_logs').select(['action', 'target_id']).where('action', '=', 'vulndb.import_requested').execute();
    expect(audit.map((a) => a.target_id)).toEqual(expect.arrayContaining([queued.id, csv.id]));
  });

  it('gzip is read transparently (EPSS .csv.gz, NVD feed gzipped); several OSV files are one import', async () => {
    const epss = (await upload([file(EPSS_SAMPLE_GZ)])).json();
    const nvd = (await upload([{ filename: 'nvdcve-2.0-sample.json.gz', content: gzipFile(NVD_FEED) }])).json();
    const osv = (await upload([file(OSV_NPM), file(OSV_DEBIAN_GZ)])).json();
    expect(osv).toMatchObject({ location: 'upload:osv-npm-ghsa-subset.json (+1 more file)', size_bytes: statSync(OSV_NPM).size + statSync(OSV_DEBIAN_GZ).size });
    await t.drain();
    expect((await getRun(epss.id)).json()).toMatchObject({ status: 'succeeded', source: 'epss', records: 20000, inserted: 20000, bytes: statSync(EPSS_SAMPLE_GZ).size });
    expect((await getRun(nvd.id)).json()).toMatchObject({ status: 'succeeded', source: 'nvd', records: 70, inserted: 70 });
    const osvRun = (await getRun(osv.id)).json();
    expect(osvRun).toMatchObject({ status: 'succeeded', source: 'osv' });
    expect(osvRun.records).toBeGreaterThan(100);
    expect(osvRun.inserted).toBe(osvRun.records);
    expect((await call(t.app, system.token, { url: '/api/v1/vulndb/stats' })).json().package_matching).toEqual({ enabled: true, message: null });
    expect(uploadsLeft()).toEqual([]);
  });

  it('a broken file: the import fails with the error and where it broke, and nothing changes', async () => {
    const before = await count(t.deps.database.db, 'vulndb_kev');
    const cut = (await upload([{ filename: 'kev-cut.json', content: truncated(KEV_JSON, 0.5) }])).json();
    const junk = (await upload([{ filename: 'notes.txt', content: 'these are not vulnerabilities\n' }])).json();
    await t.drain();
    const failed = (await getRun(cut.id)).json();
    expect(failed).toMatchObject({ status: 'failed', source: 'kev', inserted: 0, updated: 0 });
    expect(failed.error).toEqual(expect.any(String));
    expect(failed.error_offset).toBeGreaterThan(0);
    expect(failed.error_record).toBeGreaterThan(0);
    expect((await getRun(junk.id)).json()).toMatchObject({ status: 'failed', source: null, error: expect.stringMatching(/cannot tell what notes\.txt is/) });
    expect(await count(t.deps.database.db, 'vulndb_kev')).toBe(before);
    const stats = (await call(t.app, system.token, { url: '/api/v1/vulndb/stats' })).json();
    expect(stats.sources.find((s: { source: string }) => s.source === 'kev')).toMatchObject({ records: before, last_result: 'failed' });
    expect(uploadsLeft()).toEqual([]);
  });

  it('413 above CONTROLGRAPH_VULNDB_UPLOAD_MAX_BYTES (all files together); no run and no file are kept', async () => {
    const runs = await runCount();
    const big = await upload([{ filename: 'big.json', content: Buffer.alloc(MAX_BYTES + 1, 0x20) }]);
    expect(big.statusCode).toBe(413);
    expect(big.json().error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: expect.stringMatching(/exceeds the limit of 3145728 bytes/) });
    // Two files under the limit each, over it together.
    const half = Buffer.alloc(MAX_BYTES / 2 + 10, 0x20);
    const pair = await upload([
      { filename: 'a.json', content: half },
      { filename: 'b.json', content: half },
    ]);
    expect(pair.statusCode).toBe(413);
    expect(await runCount()).toBe(runs);
    expect(uploadsLeft()).toEqual([]);
  });

  it('400 for an upload without a file, an unknown field, an unknown source, an empty file, or neither upload nor url', async () => {
    const cases: Array<[Part[], RegExp]> = [
      [[{ name: 'source', content: 'kev' }], /no file in the upload/],
      [[{ name: 'colour', content: 'red' }, file(KEV_CSV)], /unknown field "colour"/],
      [[{ name: 'source', content: 'cisa' }, file(KEV_CSV)], /source must be one of kev, epss, nvd, osv/],
      [[{ filename: 'empty.json', content: '' }], /the uploaded file is empty/],
    ];
    const runs = await runCount();
    for (const [parts, message] of cases) {
      const res = await upload(parts);
      expect(res.statusCode, message.source).toBe(400);
      expect(res.json().error.message).toMatch(message);
    }
    const json = await call(t.app, system.token, { method: 'POST', url: '/api/v1/vulndb/imports', payload: {} });
    expect(json.statusCode).toBe(400);
    expect(json.json().error.message).toMatch(/send a multipart\/form-data upload, or JSON/);
    expect(await runCount()).toBe(runs);
    expect(uploadsLeft()).toEqual([]);
  });

  it('403 for a tenant-admin (upload, list, one import); 404 for an unknown import', async () => {
    const admin = tenant.admin.token;
    const runs = await runCount();
    expect((await upload([file(KEV_CSV)], admin)).statusCode).toBe(403);
    expect((await call(t.app, admin, { method: 'POST', url: '/api/v1/vulndb/imports', payload: { url: 'https://example.org/kev.json' } })).statusCode).toBe(403);
    expect((await call(t.app, admin, { url: '/api/v1/vulndb/imports' })).statusCode).toBe(403);
    const any = (await call(t.app, system.token, { url: '/api/v1/vulndb/imports?per_page=1' })).json().items[0];
    expect((await getRun(any.id, admin)).statusCode).toBe(403);
    expect(await runCount()).toBe(runs);
    const missing = await getRun('00000000-0000-4000-8000-000000000000');
    expect(missing.statusCode).toBe(404);
  });

  it('GET /vulndb/imports lists API imports with the others, newest first, paged and filtered', async () => {
    const page = (await call(t.app, system.token, { url: '/api/v1/vulndb/imports?per_page=2' })).json();
    expect(page).toMatchObject({ page: 1, per_page: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.total).toBeGreaterThanOrEqual(7);
    const failed = (await call(t.app, system.token, { url: '/api/v1/vulndb/imports?status=failed&per_page=100' })).json();
    expect(failed.items.every((r: { status: string }) => r.status === 'failed')).toBe(true);
    expect(failed.items.map((r: { location: string }) => r.location)).toEqual(expect.arrayContaining(['upload:notes.txt', 'upload:kev-cut.json']));
  });

  it('a run marked abandoned (its worker died) while its job waits is carried out by the retry, not dropped', async () => {
    const queued = (await upload([file(KEV_CSV)])).json();
    // What cleanupAbandoned writes for a run whose heartbeat stopped.
    await t.deps.database.db.updateTable('vulndb_import_runs').set({ status: 'failed', error: 'abandoned: the importing process stopped' }).where('id', '=', queued.id).execute();
    await t.drain();
    expect((await getRun(queued.id)).json()).toMatchObject({ status: 'succeeded', source: 'kev', records: 1404, error: null });
    expect(uploadsLeft()).toEqual([]);
  });

  it('503 without artifact storage (uploads wait there for the worker)', async () => {
    const store = t.deps.artifacts;
    (t.deps as { artifacts: unknown }).artifacts = null;
    try {
      const res = await upload([file(KEV_CSV)]);
      expect(res.statusCode).toBe(503);
      expect(res.json().error.message).toMatch(/artifact storage not configured/);
    } finally {
      (t.deps as { artifacts: unknown }).artifacts = store;
    }
  });
});

describe('POST /api/v1/vulndb/imports (JSON {url, source?}) through the outbound guard', () => {
  const post = (payload: Record<string, unknown>, token = system.token) => call(t.app, token, { method: 'POST', url: '/api/v1/vulndb/imports', payload });

  it('202; the worker fetches the URL (an allow-listed mirror) and imports it', async () => {
    const res = await post({ url: `${mirrorBase}/kev.json`, source: 'kev' });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ status: 'queued', source: 'kev', location: `${mirrorBase}/kev.json`, size_bytes: null });
    await t.drain();
    expect((await getRun(res.json().id)).json()).toMatchObject({ status: 'succeeded', source: 'kev', records: 1404, bytes: statSync(KEV_JSON).size });
    expect(mirrorRequests).toContain('/kev.json');
  });

  it('400 for what the guard refuses without a request: private and metadata addresses, credentials, no URL', async () => {
    const runs = await runCount();
    // (Plain http to a name is refused when the allow-list holds no address range; this app's holds one.)
    const cases: Array<[string, RegExp]> = [
      ['https://10.0.0.8/kev.json', /the address is not allowed \(10\.0\.0\.8 is/],
      ['https://[::ffff:169.254.169.254]/latest/meta-data/', /the address is not allowed/],
      ['https://user:secret@example.org/kev.json', /must not contain a user name or password/],
      ['not a url', /is not an absolute URL/],
    ];
    for (const [url, message] of cases) {
      const res = await post({ url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.message, url).toMatch(message);
    }
    expect((await post({ url: 'https://example.org/x', source: 'cisa' })).statusCode).toBe(400);
    expect(await runCount()).toBe(runs);
  });

  it('a name resolving to a private address, or a redirect to one, fails the import before any connection there', async () => {
    const requests = mirrorRequests.length;
    const named = (await post({ url: 'https://internal.example/kev.json' })).json();
    const redirected = (await post({ url: `${mirrorBase}/elsewhere` })).json();
    await t.drain();
    expect((await getRun(named.id)).json()).toMatchObject({ status: 'failed', error: expect.stringMatching(/the address is not allowed \(internal\.example resolves to/) });
    expect((await getRun(redirected.id)).json()).toMatchObject({ status: 'failed', error: expect.stringMatching(/the address is not allowed \(10\.9\.9\.9 is/) });
    // Only the mirror's own redirect was asked for.
    expect(mirrorRequests.slice(requests)).toEqual(['/elsewhere']);
  });
});

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('a large upload is streamed, never held in memory', () => {
  const SIZE = 160 * 1024 * 1024;
  let big: TestApp;
  let base: string;
  beforeAll(async () => {
    big = await createTestApp({ extraModules: vulndbModules(), env: { CONTROLGRAPH_VULNDB_UPLOAD_MAX_BYTES: String(SIZE) } });
    base = await big.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await big?.close();
  });

  /** POSTs an EPSS-like CSV of `size` bytes over a real socket, sampling this process's RSS as it goes. */
  async function streamCsv(token: string, size: number): Promise<{ status: number; body: any; peakRssGrowth: number }> {
    const boundary = '----cg-vulndb-big';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="epss-big.csv"\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const header = Buffer.from('cve,epss,percentile\n');
    const rows = Buffer.from(Array.from({ length: 8192 }, (_, i) => `CVE-2024-${String(100000 + i)},0.00043,0.09800\n`).join(''));
    gc();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sample = () => {
      gc();
      peak = Math.max(peak, process.memoryUsage().rss);
    };
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${base}/api/v1/vulndb/imports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
      });
      req.on('response', (res) => {
        sample();
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString()), peakRssGrowth: peak - baseline }));
      });
      req.on('error', reject);
      const write = async () => {
        req.write(head);
        req.write(header);
        let left = size - header.length;
        let sinceSample = 0;
        while (left > 0) {
          const piece = left >= rows.length ? rows : rows.subarray(0, left);
          left -= piece.length;
          sinceSample += piece.length;
          if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
          if (sinceSample >= 16 * 1024 * 1024) {
            sinceSample = 0;
            sample();
          }
        }
        req.end(tail);
      };
      write().catch(reject);
    });
  }

  it('160 MiB: 202 with its size, without the process growing by anything near it', async () => {
    const admin = await loginAdmin(big);
    const result = await streamCsv(admin.token, SIZE);
    expect(result.status, JSON.stringify(result.body)).toBe(202);
    expect(result.body).toMatchObject({ status: 'queued', size_bytes: SIZE, location: 'upload:epss-big.csv' });
    expect(result.peakRssGrowth).toBeLessThan(SIZE / 4);
  }, 180_000);
});
