import { readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../harness/database.js';
import { ManualClock } from '../../src/platform/clock.js';
import { stagedRows } from '../../src/modules/vulndb/import/importer.js';
import { count, EPSS_KEV, EPSS_SAMPLE_GZ, gzipFile, importer, KEV_CSV, KEV_JSON, NVD_FEED, OSV_DEBIAN_GZ, OSV_NPM, readJson, scratchDir, sha256, truncated } from './helpers.js';

let tdb: TestDatabase;
let db: TestDatabase['handle']['db'];
const clock = new ManualClock('2026-11-23T12:00:00.000Z');
let run: ReturnType<typeof importer>;
const tmp = scratchDir();

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = tdb.handle.db;
  run = importer(db, clock);
});
afterAll(async () => {
  await tdb.dispose();
  tmp.remove();
});

const source = (name: 'kev' | 'epss' | 'nvd' | 'osv') => db.selectFrom('vulndb_sources').selectAll().where('source', '=', name).executeTakeFirstOrThrow();
const runRow = (id: string) => db.selectFrom('vulndb_import_runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('KEV catalog', () => {
  it('imports the real catalog in full, with its version and date, and records the run', async () => {
    const result = await run(KEV_JSON);
    expect(result).toMatchObject({ source: 'kev', status: 'succeeded', records: 1404, inserted: 1404, updated: 0, deleted: 0, unchanged: 0 });
    expect(await count(db, 'vulndb_kev')).toBe(1404);
    const git = await db.selectFrom('vulndb_kev').selectAll().where('cve_id', '=', 'CVE-2025-48384').executeTakeFirstOrThrow();
    expect(git).toMatchObject({
      vendor_project: 'Git',
      product: 'Git',
      date_added: '2025-08-25',
      due_date: '2025-09-15',
      known_ransomware_campaign_use: 'Unknown',
      cwes: ['CWE-59', 'CWE-436'],
    });
    expect(git.notes).toContain('https://github.com/git/git/security/advisories/GHSA-vwqx-4fm8-6qc9');
    const state = await source('kev');
    expect(state).toMatchObject({ record_count: 1404, data_version: '2025.08.25', origin: 'cli', last_status: 'succeeded' });
    expect(new Date(state.data_date!).toISOString()).toBe('2025-08-25T17:04:19.979Z');
    const recorded = await runRow(result.run_id);
    expect(recorded).toMatchObject({ status: 'succeeded', trigger: 'cli', records: 1404, inserted: 1404, sha256: sha256(KEV_JSON), bytes: statSync(KEV_JSON).size });
    expect(await stagedRows(db, result.run_id)).toBe(0);
  });

  it('a re-import changes nothing: every record unchanged, no row rewritten', async () => {
    const before = await sql<{ latest: Date }>`SELECT max(updated_at) AS latest FROM vulndb_kev`.execute(db);
    clock.advance(60_000);
    const result = await run(KEV_JSON);
    expect(result).toMatchObject({ status: 'succeeded', records: 1404, inserted: 0, updated: 0, deleted: 0, unchanged: 1404 });
    const after = await sql<{ latest: Date }>`SELECT max(updated_at) AS latest FROM vulndb_kev`.execute(db);
    expect(after.rows[0]!.latest).toEqual(before.rows[0]!.latest);
  });

  it('reads the published CSV form (quoted multi-line fields) as the same data, and gzip transparently', async () => {
    expect(await run(KEV_CSV)).toMatchObject({ source: 'kev', status: 'succeeded', records: 1404, inserted: 0, updated: 0, unchanged: 1404 });
    const gz = tmp.write('kev.json.gz', gzipFile(KEV_JSON));
    expect(await run(gz)).toMatchObject({ source: 'kev', status: 'succeeded', records: 1404, unchanged: 1404 });
  });

  it('is a snapshot: an entry missing from the next catalog is deleted, a changed one updated', async () => {
    const catalog = readJson(KEV_JSON);
    const removed = catalog.vulnerabilities.shift();
    catalog.count = catalog.vulnerabilities.length;
    catalog.vulnerabilities[0].dueDate = '2030-01-01';
    const smaller = tmp.write('kev-1403.json', JSON.stringify(catalog));
    expect(await run(smaller)).toMatchObject({ status: 'succeeded', records: 1403, inserted: 0, updated: 1, deleted: 1, unchanged: 1402 });
    expect(await db.selectFrom('vulndb_kev').select('cve_id').where('cve_id', '=', removed.cveID).executeTakeFirst()).toBeUndefined();
    expect(await run(KEV_JSON)).toMatchObject({ inserted: 1, updated: 1, deleted: 0, unchanged: 1402 });
  });

  it('refuses a truncated catalog: the previous data stays, the run says where it broke', async () => {
    const before = await source('kev');
    const cut = tmp.write('kev-cut.json', truncated(KEV_JSON, 0.6));
    const result = await run(cut);
    expect(result.status).toBe('failed');
    // The scanner saw the document end inside a record: the break is at the end of the file.
    expect(result.error).toBe(`unexpected end of JSON: the file is truncated at byte ${statSync(cut).size}`);
    expect(result.error_offset).toBe(statSync(cut).size);
    expect(result.error_record).toBeGreaterThan(500);
    expect(result.error_record).toBeLessThan(1404);
    expect(result.error_context).toMatch(/kev-cut\.json, after CVE-\d{4}-\d+/);
    expect(await count(db, 'vulndb_kev')).toBe(1404);
    expect(await stagedRows(db, result.run_id)).toBe(0);
    const recorded = await runRow(result.run_id);
    expect(recorded).toMatchObject({ status: 'failed', error_offset: result.error_offset, error_record: result.error_record, source: 'kev' });
    const after = await source('kev');
    expect(after).toMatchObject({ last_status: 'failed', record_count: 1404, data_version: '2025.08.25', last_run_id: result.run_id });
    expect(after.last_success_at).toEqual(before.last_success_at);
  });

  it('refuses a truncated gzip file and a catalog whose count disagrees with its entries', async () => {
    const gz = gzipFile(KEV_JSON);
    const cutGz = tmp.write('kev-cut.json.gz', gz.subarray(0, Math.floor(gz.length * 0.5)));
    const result = await run(cutGz);
    expect(result).toMatchObject({ status: 'failed', source: 'kev' });
    expect(result.error).toMatch(/unexpected end|truncated|expected/i);
    const catalog = readJson(KEV_JSON);
    catalog.count = 1405;
    const lying = await run(tmp.write('kev-count.json', JSON.stringify(catalog)));
    expect(lying).toMatchObject({ status: 'failed', error: 'the catalog says count 1405 but holds 1404 vulnerabilities', error_record: 1404 });
    expect(await count(db, 'vulndb_kev')).toBe(1404);
  });

  it('refuses a record without a valid CVE id, naming the record', async () => {
    const catalog = readJson(KEV_JSON);
    catalog.vulnerabilities[10].cveID = 'CVE-20XX-1';
    const result = await run(tmp.write('kev-bad.json', JSON.stringify(catalog)));
    expect(result).toMatchObject({ status: 'failed', error: 'invalid cveID "CVE-20XX-1"', error_record: 10 });
    expect(result.error_context).toContain(`after ${catalog.vulnerabilities[9].cveID}`);
  });
});

describe('EPSS scores', () => {
  it('imports the scores of the KEV CVEs, then a 20,000-row gzip sample replaces them (a snapshot)', async () => {
    expect(await run(EPSS_KEV)).toMatchObject({ source: 'epss', status: 'succeeded', records: 1404, inserted: 1404 });
    const log4j = await db.selectFrom('vulndb_epss').selectAll().where('cve_id', '=', 'CVE-2021-44228').executeTakeFirstOrThrow();
    expect(log4j.epss).toBeGreaterThan(0.9);
    expect(await run(EPSS_KEV)).toMatchObject({ inserted: 0, updated: 0, deleted: 0, unchanged: 1404 });
    const sample = await run(EPSS_SAMPLE_GZ);
    const lines = gunzipSync(readFileSync(EPSS_SAMPLE_GZ)).toString('utf8').trim().split('\n').slice(1);
    const sampleIds = new Set(lines.map((l) => l.split(',')[0]));
    const kevIds = readFileSync(EPSS_KEV, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(',')[0]!);
    const shared = kevIds.filter((id) => sampleIds.has(id)).length;
    expect(sample).toMatchObject({ status: 'succeeded', records: 20000, inserted: 20000 - shared, unchanged: shared, deleted: 1404 - shared });
    expect(await count(db, 'vulndb_epss')).toBe(20000);
    expect(await source('epss')).toMatchObject({ record_count: 20000, data_version: null, data_date: null });
  });

  it('reads the #model_version / score_date line of the published daily file', async () => {
    const file = tmp.write(
      'epss_scores-2025-05-18.csv',
      // Hand-written in the published layout: the shared snapshot has no header comment line.
      '#model_version:v2025.03.14,score_date:2025-05-18T12:55:00Z\ncve,epss,percentile\nCVE-2021-44228,0.94358,0.99957\nCVE-2024-3400,0.94255,0.99935\n',
    );
    expect(await run(file)).toMatchObject({ source: 'epss', status: 'succeeded', records: 2, inserted: 2, deleted: 20000 });
    expect(await source('epss')).toMatchObject({ data_version: 'v2025.03.14', metadata: { model_version: 'v2025.03.14', score_date: '2025-05-18T12:55:00.000Z' } });
    expect(new Date((await source('epss')).data_date!).toISOString()).toBe('2025-05-18T12:55:00.000Z');
  });

  it('refuses a file cut in the middle of a line, a bad score and an empty file, keeping the scores', async () => {
    await run(EPSS_KEV);
    const text = readFileSync(EPSS_KEV, 'utf8');
    const cut = await run(tmp.write('epss-cut.csv', text.slice(0, text.length - 7)));
    expect(cut).toMatchObject({ status: 'failed', source: 'epss' });
    expect(cut.error).toMatch(/does not end with a newline|Invalid Record Length/);
    expect(cut.error_offset).toBeGreaterThan(50_000);
    const bad = await run(tmp.write('epss-bad.csv', 'cve,epss,percentile\nCVE-2021-44228,0.9,0.99\nCVE-2024-3400,1.7,0.99\n'));
    expect(bad).toMatchObject({ status: 'failed', error: 'CVE-2024-3400: invalid epss "1.7"', error_record: 1 });
    expect(bad.error_context).toContain('line 3');
    const empty = await run(tmp.write('epss-empty.csv', 'cve,epss,percentile\n'), { source: 'epss' });
    expect(empty).toMatchObject({ status: 'failed', error: 'the epss file holds no records: refusing to empty the epss data' });
    expect(await count(db, 'vulndb_epss')).toBe(1404);
  });
});

describe('NVD CVE API 2.0', () => {
  const feed = readJson(NVD_FEED);
  const cpeMatches = feed.vulnerabilities.reduce(
    (n: number, v: any) => n + (v.cve.configurations ?? []).reduce((m: number, c: any) => m + c.nodes.reduce((k: number, node: any) => k + node.cpeMatch.length, 0), 0),
    0,
  );

  it('imports the real sample feed in full: 70 CVEs, every CPE match, CVSS and CWEs', async () => {
    expect(await run(NVD_FEED)).toMatchObject({ source: 'nvd', status: 'succeeded', records: 70, inserted: 70 });
    expect(await count(db, 'vulndb_cves')).toBe(70);
    expect(await count(db, 'vulndb_cpe_matches')).toBe(cpeMatches);
    const log4j = await db.selectFrom('vulndb_cves').selectAll().where('cve_id', '=', 'CVE-2021-44228').executeTakeFirstOrThrow();
    expect(log4j).toMatchObject({ cvss_v3_score: 10, cvss_v3_severity: 'CRITICAL', vuln_status: 'Analyzed', cwes: expect.arrayContaining(['CWE-502']) });
    expect(log4j.published!.toISOString()).toBe('2021-12-10T10:15:09.143Z');
    expect(log4j.reference_urls.length).toBe(new Set(feed.vulnerabilities.find((v: any) => v.cve.id === 'CVE-2021-44228').cve.references.map((r: any) => r.url)).size);
    const v4 = await db.selectFrom('vulndb_cves').select(['cvss_v4_score', 'cvss_v4_severity']).where('cve_id', '=', 'CVE-2024-5910').executeTakeFirstOrThrow();
    expect(v4.cvss_v4_score).toBeGreaterThan(0);
    const received = await db.selectFrom('vulndb_cves').selectAll().where('cve_id', '=', 'CVE-2023-47246').executeTakeFirstOrThrow();
    expect(received).toMatchObject({ vuln_status: 'Received', cvss_v3_score: null });
    expect(await source('nvd')).toMatchObject({ record_count: 70, data_version: 'NVD CVE API 2.0' });
  });

  it('a re-import changes nothing; a page with one changed record merges that record only', async () => {
    expect(await run(NVD_FEED)).toMatchObject({ inserted: 0, updated: 0, unchanged: 70 });
    const log4j = structuredClone(feed.vulnerabilities.find((v: any) => v.cve.id === 'CVE-2021-44228'));
    log4j.cve.descriptions[0].value = 'Changed description';
    log4j.cve.configurations = log4j.cve.configurations.slice(0, 1);
    const page = { resultsPerPage: 1, startIndex: 0, totalResults: 1, format: 'NVD_CVE', version: '2.0', timestamp: '2026-11-23T00:00:00.000', vulnerabilities: [log4j] };
    expect(await run(tmp.write('nvd-page.json', JSON.stringify(page)))).toMatchObject({ records: 1, inserted: 0, updated: 1, unchanged: 0, deleted: 0 });
    expect(await count(db, 'vulndb_cves')).toBe(70);
    const kept = log4j.cve.configurations[0].nodes.reduce((k: number, node: any) => k + node.cpeMatch.length, 0);
    expect(await db.selectFrom('vulndb_cpe_matches').select('cve_id').where('cve_id', '=', 'CVE-2021-44228').execute()).toHaveLength(kept);
    expect((await db.selectFrom('vulndb_cves').select('description').where('cve_id', '=', 'CVE-2021-44228').executeTakeFirstOrThrow()).description).toBe('Changed description');
    expect(await run(NVD_FEED)).toMatchObject({ updated: 1, unchanged: 69 });
    expect(await count(db, 'vulndb_cpe_matches')).toBe(cpeMatches);
  });

  it('refuses a truncated feed and a page holding fewer records than it says, keeping the data', async () => {
    const cut = await run(tmp.write('nvd-cut.json', truncated(NVD_FEED, 0.7)));
    expect(cut).toMatchObject({ status: 'failed', source: 'nvd' });
    expect(cut.error_record).toBeGreaterThan(0);
    expect(cut.error_record).toBeLessThan(70);
    const short = { ...feed, vulnerabilities: feed.vulnerabilities.slice(0, 69) };
    const lying = await run(tmp.write('nvd-short.json', JSON.stringify(short)));
    expect(lying).toMatchObject({ status: 'failed', error: 'the page says resultsPerPage 70 but holds 69 vulnerabilities' });
    expect(await count(db, 'vulndb_cves')).toBe(70);
    expect(await count(db, 'vulndb_cpe_matches')).toBe(cpeMatches);
  });
});

describe('OSV advisories', () => {
  const countAffected = (records: any[]) =>
    records.reduce(
      (n, r) =>
        n +
        (r.affected ?? []).filter((a: any) => a.package?.name && a.package?.ecosystem && ((a.ranges ?? []).some((g: any) => g.type !== 'GIT') || (a.versions ?? []).length)).length,
      0,
    );
  const debian = JSON.parse(gunzipSync(readFileSync(OSV_DEBIAN_GZ)).toString('utf8'));
  const npm = readJson(OSV_NPM);

  it('imports the Debian (gzip) and npm exports: every advisory and its affected packages', async () => {
    expect(await run(OSV_DEBIAN_GZ)).toMatchObject({ source: 'osv', status: 'succeeded', records: 416, inserted: 416 });
    expect(await run(OSV_NPM)).toMatchObject({ source: 'osv', status: 'succeeded', records: 417, inserted: 417 });
    expect(await count(db, 'vulndb_osv_advisories')).toBe(833);
    expect(await count(db, 'vulndb_osv_affected')).toBe(countAffected(debian) + countAffected(npm));
    const dsa = await db.selectFrom('vulndb_osv_advisories').selectAll().where('id', '=', 'DSA-5430-1').executeTakeFirstOrThrow();
    expect(dsa.cve_ids).toContain('CVE-2023-21930');
    const ghsa = await db.selectFrom('vulndb_osv_advisories').selectAll().where('id', '=', 'GHSA-2234-fmw7-43wr').executeTakeFirstOrThrow();
    expect(ghsa).toMatchObject({ cve_ids: ['CVE-2024-48913'], severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:H/A:N' }] });
    expect(await run(OSV_NPM)).toMatchObject({ inserted: 0, updated: 0, unchanged: 417 });
  });

  it('imports a directory of single advisories (and osv.dev {vulns: [...]} answers) as one run', async () => {
    const dir = scratchDir();
    try {
      const picks = npm.slice(0, 3).map((a: any) => ({ ...a, summary: `${a.summary} (edited)` }));
      dir.write('a.json', JSON.stringify(picks[0]));
      dir.write('b.json.gz', gzipFile(dir.write('b-src.json', JSON.stringify(picks[1]))));
      dir.write('query-answer.json', JSON.stringify({ vulns: [picks[2]] }));
      dir.write('notes.txt', 'not data');
      const result = await run(dir.dir);
      // b-src.json is the plain copy of b.json.gz: the same advisory twice, the last read wins.
      expect(result).toMatchObject({ source: 'osv', status: 'succeeded', records: 4, inserted: 0, updated: 3 });
    } finally {
      dir.remove();
    }
  });

  it('refuses a truncated export and a directory with one broken file, saying where, keeping the advisories', async () => {
    const before = await source('osv');
    const advisories = await count(db, 'vulndb_osv_advisories');
    const affected = await count(db, 'vulndb_osv_affected');
    const kept = async () => {
      expect(await count(db, 'vulndb_osv_advisories')).toBe(advisories);
      expect(await count(db, 'vulndb_osv_affected')).toBe(affected);
    };

    // The npm export cut off at 60 % of its bytes: the break is at the end of the file.
    const cut = tmp.write('osv-npm-cut.json', truncated(OSV_NPM, 0.6));
    const result = await run(cut);
    expect(result).toMatchObject({ status: 'failed', source: 'osv', error: `unexpected end of JSON: the file is truncated at byte ${statSync(cut).size}` });
    expect(result.error_offset).toBe(statSync(cut).size);
    expect(result.error_record).toBeGreaterThan(100);
    expect(result.error_record).toBeLessThan(417);
    expect(result.error_context).toMatch(/^osv-npm-cut\.json, after GHSA-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/);
    expect(await stagedRows(db, result.run_id)).toBe(0);
    expect(await runRow(result.run_id)).toMatchObject({ status: 'failed', source: 'osv', error_offset: result.error_offset, error_record: result.error_record });
    await kept();

    // A directory whose second file (of three) is cut: the first file's change is not applied either.
    const dir = scratchDir();
    try {
      const edited = npm[5];
      dir.write('a.json', JSON.stringify({ ...edited, summary: `${edited.summary} (edited)` }));
      const text = JSON.stringify(npm[6], null, 2);
      const broken = dir.write('b-broken.json', text.slice(0, Math.floor(text.length * 0.6)));
      dir.write('c.json', JSON.stringify(npm[7]));
      const failed = await run(dir.dir);
      expect(failed).toMatchObject({
        status: 'failed',
        source: 'osv',
        error: `unexpected end of JSON: the file is truncated at byte ${statSync(broken).size}`,
        error_offset: statSync(broken).size,
        error_context: `b-broken.json, after ${edited.id}`,
      });
      expect(await stagedRows(db, failed.run_id)).toBe(0);
      await kept();
      const stored = await db.selectFrom('vulndb_osv_advisories').select('summary').where('id', '=', edited.id).executeTakeFirstOrThrow();
      expect(stored.summary).toBe(edited.summary);
      const after = await source('osv');
      expect(after).toMatchObject({ last_status: 'failed', record_count: before.record_count, last_run_id: failed.run_id });
      expect(after.last_success_at).toEqual(before.last_success_at);
    } finally {
      dir.remove();
    }
  });

  it('detects formats, and refuses content it cannot place or of another source than asked', async () => {
    const unknown = await run(tmp.write('mystery.json', '{"hello": "world"}'));
    expect(unknown).toMatchObject({ status: 'failed', error: expect.stringContaining('cannot tell what mystery.json is') });
    const wrong = await run(KEV_JSON, { source: 'epss' });
    expect(wrong).toMatchObject({ status: 'failed', source: 'epss' });
    const missing = await run(tmp.path('nope.json'));
    expect(missing).toMatchObject({ status: 'failed', error: expect.stringContaining('does not exist') });
  });
});
