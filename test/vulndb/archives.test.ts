import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { call, loginAdmin, type Session } from '../harness/identity.js';
import { runSync } from '../../src/modules/vulndb/sync-job.js';
import { count, KEV_JSON, NVD_FEED, NVD_ZIP, OSV_NPM_ZIP, osvEntries, readJson, scratchDir, silentLog, tarGzOf, vulndbModules, zipOf } from './helpers.js';

/**
 * Zip and tar archives of vulnerability data (issue 20 item 2): OSV's per-ecosystem all.zip, NVD's
 * nvdcve-2.0-YYYY.json.zip, tar.gz mirrors. Uploaded through the API, fetched from a URL and read by
 * the sync, over a real database, artifact store and job worker. The app's limits are small so that a
 * bomb of a few kilobytes crosses them.
 */
const UNCOMPRESSED_MAX = 8 * 1024 * 1024;
const MAX_ENTRIES = 150;
let t: TestApp;
let system: Session;
let mirror: Server;
let mirrorBase: string;
const served = new Map<string, Buffer>();
const tmp = scratchDir();

beforeAll(async () => {
  mirror = createServer((req, res) => {
    const body = served.get(req.url ?? '');
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => mirror.listen(0, '127.0.0.1', resolve));
  mirrorBase = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}`;
  t = await createTestApp({
    extraModules: vulndbModules(),
    env: {
      CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES: String(UNCOMPRESSED_MAX),
      CONTROLGRAPH_VULNDB_ARCHIVE_MAX_ENTRIES: String(MAX_ENTRIES),
      CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
    },
  });
  system = await loginAdmin(t);
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => mirror?.close(resolve));
  tmp.remove();
});

function multipart(filename: string, content: Buffer, source?: string) {
  const boundary = `----cg-vulndb-${Math.random().toString(16).slice(2)}`;
  const field = source ? `--${boundary}\r\nContent-Disposition: form-data; name="source"\r\n\r\n${source}\r\n` : '';
  const payload = Buffer.concat([
    Buffer.from(`${field}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Uploads one file, lets the worker import it, and returns the finished run. */
async function importUpload(filename: string, content: Buffer, source?: string) {
  const res = await call(t.app, system.token, { method: 'POST', url: '/api/v1/vulndb/imports', ...multipart(filename, content, source) });
  expect(res.statusCode, res.body).toBe(202);
  await t.drain();
  return (await call(t.app, system.token, { url: `/api/v1/vulndb/imports/${res.json().id}` })).json();
}

async function importUrl(path: string, body: Buffer) {
  served.set(path, body);
  const res = await call(t.app, system.token, { method: 'POST', url: '/api/v1/vulndb/imports', payload: { url: `${mirrorBase}${path}` } });
  expect(res.statusCode, res.body).toBe(202);
  await t.drain();
  return (await call(t.app, system.token, { url: `/api/v1/vulndb/imports/${res.json().id}` })).json();
}

const db = () => t.deps.database.db;

/** Live rows of every table an import writes, and the staging rows left (none once a run ends). */
async function snapshot() {
  const tables = ['vulndb_kev', 'vulndb_epss', 'vulndb_cves', 'vulndb_cpe_matches', 'vulndb_osv_advisories', 'vulndb_osv_affected'];
  const stages = ['vulndb_kev_stage', 'vulndb_epss_stage', 'vulndb_nvd_stage', 'vulndb_cpe_stage', 'vulndb_osv_stage', 'vulndb_osv_affected_stage'];
  const out: Record<string, number> = {};
  for (const table of [...tables, ...stages]) out[table] = await count(db(), table);
  return out;
}

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

/** Content an OSV detector accepts, then `padding` bytes of spaces: compresses to almost nothing. */
function bombContent(padding: number): Buffer {
  const head = Buffer.from('{"id":"GHSA-bomb-bomb-bomb","modified":"2024-01-01T00:00:00Z","affected":[]}');
  return Buffer.concat([head, Buffer.alloc(padding, 0x20)]);
}

describe('zip archives through the API', () => {
  it("OSV's all.zip (one advisory per entry): every entry detected as a directory's files are; a second upload changes nothing", async () => {
    const run = await importUpload('all.zip', readFileSync(OSV_NPM_ZIP));
    expect(run).toMatchObject({ status: 'succeeded', source: 'osv', records: 100, inserted: 100, updated: 0, error: null, bytes: statSync(OSV_NPM_ZIP).size });
    expect(await count(db(), 'vulndb_osv_advisories')).toBe(100);
    const again = await importUpload('all.zip', readFileSync(OSV_NPM_ZIP), 'osv');
    expect(again).toMatchObject({ status: 'succeeded', source: 'osv', records: 100, inserted: 0, updated: 0, unchanged: 100 });
    expect(uploadsLeft()).toEqual([]);
    expect((await snapshot()).vulndb_osv_stage).toBe(0);
  });

  it("NVD's nvdcve-2.0-YYYY.json.zip: the feed inside is read as the .json or .json.gz is", async () => {
    const run = await importUpload('nvdcve-2.0-sample.json.zip', readFileSync(NVD_ZIP));
    expect(run).toMatchObject({ status: 'succeeded', source: 'nvd', records: 70, inserted: 70 });
    expect(await count(db(), 'vulndb_cves')).toBe(70);
  });

  it('one KEV catalog in a zip is imported; two are refused (a snapshot is one file); an archive without data files is refused', async () => {
    const catalog = readJson(KEV_JSON);
    catalog.vulnerabilities = catalog.vulnerabilities.slice(0, 3);
    catalog.count = 3;
    const one = await importUpload(
      'kev.zip',
      await zipOf([
        ['README.txt', 'the KEV catalog'],
        ['kev/known_exploited_vulnerabilities.json', JSON.stringify(catalog)],
      ]),
    );
    expect(one).toMatchObject({ status: 'succeeded', source: 'kev', records: 3, inserted: 3 });
    const before = await snapshot();
    const two = await importUpload(
      'kev2.zip',
      await zipOf([
        ['a.json', JSON.stringify(catalog)],
        ['b.json', JSON.stringify(catalog)],
      ]),
    );
    expect(two).toMatchObject({ status: 'failed', error: 'an archive or upload of several files may hold NVD or OSV files only (kev2.zip/b.json is kev)' });
    const none = await importUpload(
      'docs.zip',
      await zipOf([
        ['README.md', '# nothing here'],
        ['data/notes.txt', 'none'],
      ]),
    );
    expect(none).toMatchObject({ status: 'failed', source: null, error: 'docs.zip: the archive holds no .json, .csv or .gz data file; nothing was imported' });
    expect(await snapshot()).toEqual(before);
  });

  it('a broken entry fails the import naming the entry; nothing changes', async () => {
    const before = await snapshot();
    const entries = osvEntries(120).slice(100);
    const [name, content] = entries[7]!;
    entries[7] = [name, content.slice(0, content.length / 2)];
    const run = await importUpload('broken.zip', await zipOf(entries));
    expect(run).toMatchObject({ status: 'failed', source: 'osv', inserted: 0, records: 7 });
    expect(run.error_context).toBe(`broken.zip/${name}, after ${entries[6]![0].replace(/\.json$/, '')}`);
    expect(run.error).toEqual(expect.any(String));
    expect(await snapshot()).toEqual(before);
    expect(uploadsLeft()).toEqual([]);
  });

  it('an entry with an absolute or ".." path refuses the whole archive, naming the entry; nothing changes', async () => {
    const before = await snapshot();
    const good = osvEntries(1)[0]![1];
    // yazl will not write such names: write safe ones of the same length and patch the bytes.
    const patch = async (safe: string, evil: string) => {
      const zip = await zipOf([
        ['GHSA-ok.json', good],
        [safe, good],
      ]);
      const bytes = Buffer.from(zip.toString('latin1').replaceAll(safe, evil), 'latin1');
      expect(bytes.length).toBe(zip.length);
      return bytes;
    };
    const dotdot = await importUpload('dotdot.zip', await patch('aa/evil.json', '../evil.json'));
    expect(dotdot).toMatchObject({ status: 'failed', inserted: 0 });
    expect(dotdot.error).toBe('dotdot.zip: the entry "../evil.json" has a ".." path (entries are never written to disk, but such an archive is refused); nothing was imported');
    const absolute = await importUpload('absolute.zip', await patch('xetc/evil.json', '/etc/evil.json'));
    expect(absolute.error).toMatch(/^absolute\.zip: the entry "\/etc\/evil\.json" has an absolute path/);
    const tar = await importUpload(
      'dotdot.tar.gz',
      await tarGzOf([
        ['GHSA-ok.json', good],
        ['data/../../evil.json', good],
      ]),
    );
    expect(tar.error).toMatch(/^dotdot\.tar\.gz: the entry "data\/\.\.\/\.\.\/evil\.json" has a "\.\." path/);
    expect(await snapshot()).toEqual(before);
  });
});

describe('archive bombs are refused, nothing changed', () => {
  it(`entries that say they expand past CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES: refused before a byte of content is read`, async () => {
    const before = await snapshot();
    const zip = await zipOf([['bomb.json', bombContent(UNCOMPRESSED_MAX)]]);
    expect(zip.length).toBeLessThan(64 * 1024);
    const run = await importUpload('bomb.zip', zip);
    expect(run).toMatchObject({ status: 'failed', source: null, records: 0, inserted: 0 });
    expect(run.error).toBe(
      `bomb.zip: its entries expand to ${bombContent(UNCOMPRESSED_MAX).length} bytes, more than ${UNCOMPRESSED_MAX} (CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES): refused as a possible zip bomb; nothing was imported`,
    );
    expect(await snapshot()).toEqual(before);
    expect(uploadsLeft()).toEqual([]);
  });

  it('more entries than CONTROLGRAPH_VULNDB_ARCHIVE_MAX_ENTRIES (zip and tar)', async () => {
    const before = await snapshot();
    const many = osvEntries(MAX_ENTRIES + 1);
    const zip = await importUpload('many.zip', await zipOf(many));
    expect(zip.error).toBe(
      `many.zip: the archive holds more than ${MAX_ENTRIES} entries (CONTROLGRAPH_VULNDB_ARCHIVE_MAX_ENTRIES): refused as a possible zip bomb; nothing was imported`,
    );
    const tar = await importUpload('many.tar.gz', await tarGzOf(many));
    expect(tar).toMatchObject({ status: 'failed', inserted: 0 });
    expect(tar.error).toMatch(/^many\.tar\.gz: the archive holds more than 150 entries/);
    expect(await snapshot()).toEqual(before);
  });

  it('content that expands further than it says (a gzip inside an entry; a plain gzip) is stopped as it flows', async () => {
    const before = await snapshot();
    const inner = gzipSync(bombContent(UNCOMPRESSED_MAX));
    const nested = await importUpload('nested.zip', await zipOf([['bomb.json.gz', inner]], { store: true }));
    expect(nested).toMatchObject({ status: 'failed', source: 'osv', inserted: 0 });
    expect(nested.error).toBe(
      `nested.zip/bomb.json.gz expands to more than ${UNCOMPRESSED_MAX} bytes (CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES): refused as a possible zip bomb`,
    );
    const plain = await importUpload('bomb.json.gz', inner);
    expect(plain.error).toBe(`bomb.json.gz expands to more than ${UNCOMPRESSED_MAX} bytes (CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES): refused as a possible zip bomb`);
    const tar = await importUpload('bomb.tar.gz', await tarGzOf([['bomb.json', bombContent(UNCOMPRESSED_MAX)]]));
    expect(tar.error).toMatch(/^bomb\.tar\.gz: its entries expand to more than 8388608 bytes \(CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES\)/);
    expect(await snapshot()).toEqual(before);
    expect(uploadsLeft()).toEqual([]);
  });
});

describe('archives from a URL and from sync sources', () => {
  it('a zip download is copied to a temporary file and read; a .tar.gz streams (README skipped)', async () => {
    const zipRun = await importUrl('/osv/npm/all.zip', readFileSync(OSV_NPM_ZIP));
    expect(zipRun).toMatchObject({ status: 'succeeded', source: 'osv', records: 100, unchanged: 100 });
    const entries = osvEntries(110).slice(100);
    const tarRun = await importUrl('/osv/npm-extra.tar.gz', await tarGzOf([['README.md', 'OSV export'], ...entries.map(([n, c]): [string, string] => [`npm/${n}`, c])]));
    expect(tarRun).toMatchObject({ status: 'succeeded', source: 'osv', records: 10, inserted: 10 });
    const nvdTar = await importUrl('/nvd.tgz', await tarGzOf([['nvdcve-2.0-sample.json.gz', gzipSync(readFileSync(NVD_FEED))]]));
    expect(nvdTar).toMatchObject({ status: 'succeeded', source: 'nvd', records: 70, unchanged: 70 });
  });

  it('a sync source that is a zip, or a directory holding archives, is read in place; unchanged content is found unchanged', async () => {
    const zip = tmp.write('osv-mirror.zip', readFileSync(OSV_NPM_ZIP));
    const dir = tmp.path('mirror');
    mkdirSync(join(dir, 'npm'), { recursive: true });
    writeFileSync(join(dir, 'npm', 'all.zip'), await zipOf(osvEntries(130).slice(110)));
    writeFileSync(join(dir, 'extra.tar.gz'), await tarGzOf(osvEntries(135).slice(130)));
    const sync = (location: string) => runSync({ ...t.deps, log: silentLog, config: { ...t.deps.config, vulndbSources: [`osv=${location}`] } }, { trigger: 'manual' });
    expect((await sync(zip)).runs).toMatchObject([{ status: 'succeeded', source: 'osv', records: 100, unchanged: 100 }]);
    expect((await sync(zip)).runs).toMatchObject([{ status: 'unchanged', source: 'osv', records: 100 }]);
    expect((await sync(dir)).runs).toMatchObject([{ status: 'succeeded', source: 'osv', records: 25, inserted: 25 }]);
    expect((await sync(dir)).runs).toMatchObject([{ status: 'unchanged', source: 'osv', records: 25 }]);
  });
});
