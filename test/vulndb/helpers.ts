import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { pack as tarPack } from 'tar-stream';
import yazl from 'yazl';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/platform/db/schema.js';
import type { Clock } from '../../src/platform/clock.js';
import { projectPath } from '../../src/platform/paths.js';
import { importLocation, type ImportOptions, type ImportResult } from '../../src/modules/vulndb/import/importer.js';
import { modules } from '../../src/modules/index.js';
import type { Module } from '../../src/modules/module.js';
import { vulndbModule } from '../../src/modules/vulndb/module.js';

/** The vulndb module for createTestApp's extraModules, unless the module list already has it. */
export function vulndbModules(): Module[] {
  return modules.some((m) => m.name === vulndbModule.name) ? [] : [vulndbModule];
}

export const FIXTURES = projectPath('test', 'fixtures', 'vulndb');
export const fixture = (name: string) => join(FIXTURES, name);

export const KEV_JSON = fixture('known_exploited_vulnerabilities.json');
export const KEV_CSV = fixture('known_exploited_vulnerabilities.csv');
export const EPSS_KEV = fixture('epss-kev-subset.csv');
export const EPSS_SAMPLE_GZ = fixture('epss-sample-20000.csv.gz');
export const NVD_FEED = fixture('nvd-cve-2.0-sample-feed.json');
export const OSV_DEBIAN_GZ = fixture('osv-debian12-host-subset.json.gz');
export const OSV_NPM = fixture('osv-npm-ghsa-subset.json');
export const HOST_INVENTORY = fixture('dpkg-packages-with-source.tsv');
export const JUICE_SHOP_SBOM = fixture('juice-shop-11.1.2.cdx-1.2.json');

export const silentLog = pino({ level: 'silent' });

export function importer(db: Kysely<Database>, clock: Clock) {
  return (location: string, options: Partial<ImportOptions> = {}): Promise<ImportResult> => importLocation({ db, clock, log: silentLog }, location, { trigger: 'cli', ...options });
}

export async function count(db: Kysely<Database>, table: string): Promise<number> {
  const row = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)}`.execute(db);
  return row.rows[0]!.n;
}

/** A scratch directory removed by the returned function. */
export function scratchDir(): { dir: string; path: (name: string) => string; write: (name: string, content: string | Buffer) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'cg-vulndb-'));
  return {
    dir,
    path: (name) => join(dir, name),
    write(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The first `fraction` of a file's bytes (a cut-off download). */
export function truncated(path: string, fraction: number): Buffer {
  const bytes = readFileSync(path);
  return bytes.subarray(0, Math.floor(bytes.length * fraction));
}

export function gzipFile(path: string): Buffer {
  return gzipSync(readFileSync(path));
}

export function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export function readJson<T = any>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

export const OSV_NPM_ZIP = fixture('osv-npm-all-100.zip');
export const NVD_ZIP = fixture('nvdcve-2.0-sample.json.zip');

/** A zip of the given entries (yazl: deflated, or stored with `store`), in memory: tests build small ones. */
export async function zipOf(entries: Array<[path: string, content: string | Buffer]>, options: { store?: boolean } = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [path, content] of entries) zip.addBuffer(Buffer.from(content), path, { compress: !options.store });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A gzipped tar of the given entries (tar-stream). */
export async function tarGzOf(entries: Array<[path: string, content: string | Buffer]>): Promise<Buffer> {
  const pack = tarPack();
  for (const [path, content] of entries) pack.entry({ name: path }, Buffer.from(content));
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(Buffer.from(chunk as Uint8Array));
  return gzipSync(Buffer.concat(chunks));
}

/** The OSV advisories of the npm fixture, as osv.dev exports them: one `<id>.json` per advisory. */
export function osvEntries(limit: number): Array<[string, string]> {
  const advisories = readJson<Array<{ id: string }>>(OSV_NPM).sort((a, b) => (a.id < b.id ? -1 : 1));
  return advisories.slice(0, limit).map((a) => [`${a.id}.json`, JSON.stringify(a, null, 1)]);
}
