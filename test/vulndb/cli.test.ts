import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDatabaseForChild } from '../harness/database.js';
import { saveEnv } from '../harness/env.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { vulndbCommand, vulndbHelp } from '../../src/cli/vulndb.js';
import { count, EPSS_KEV, KEV_CSV, KEV_JSON, NVD_FEED, OSV_NPM_ZIP, osvEntries, scratchDir, truncated, zipOf } from './helpers.js';

/** The CLI reads DATABASE_URL and friends from the environment, as `controlgraph vulndb` does. */
let database: { url: string; dispose(): Promise<void> };
const restoreEnv = saveEnv('DATABASE_URL', 'LOG_LEVEL', 'CONTROLGRAPH_VULNDB_SOURCES');
let output: string[];
const tmp = scratchDir();

beforeAll(async () => {
  database = await createDatabaseForChild();
});
afterAll(async () => {
  await database.dispose();
  tmp.remove();
});
beforeEach(() => {
  process.env.DATABASE_URL = database.url;
  process.env.LOG_LEVEL = 'silent';
  output = [];
  vi.spyOn(console, 'log').mockImplementation((line: unknown) => void output.push(String(line)));
});
afterEach(() => {
  vi.restoreAllMocks();
  restoreEnv();
});

async function rows(table: string): Promise<number> {
  const handle = await openDatabase(database.url);
  try {
    return await count(handle.db, table);
  } finally {
    await handle.close();
  }
}

describe('controlgraph vulndb', () => {
  it('import: detects the format, prints the counts; a second import changes nothing', async () => {
    await vulndbCommand(['import', KEV_JSON]);
    expect(output).toEqual([`kev ${KEV_JSON}: 1404 records read; 1404 inserted, 0 updated, 0 deleted, 0 unchanged`]);
    await vulndbCommand(['import', KEV_CSV]);
    expect(output[1]).toBe(`kev ${KEV_CSV}: 1404 records read; 0 inserted, 0 updated, 0 deleted, 1404 unchanged`);
    await vulndbCommand(['import', '--source', 'nvd', NVD_FEED]);
    await vulndbCommand(['import', EPSS_KEV, '--source=epss']);
    expect(output.slice(2)).toEqual([
      `nvd ${NVD_FEED}: 70 records read; 70 inserted, 0 updated, 0 deleted, 0 unchanged`,
      `epss ${EPSS_KEV}: 1404 records read; 1404 inserted, 0 updated, 0 deleted, 0 unchanged`,
    ]);
    expect(await rows('vulndb_kev')).toBe(1404);
  });

  it('import of a broken file fails (exit status 1) saying where it broke, and changes nothing', async () => {
    const cut = tmp.write('kev-cut.json', truncated(KEV_JSON, 0.5));
    await expect(vulndbCommand(['import', cut])).rejects.toThrow(
      /^kev .*kev-cut\.json: FAILED: .+ \(byte \d+, after \d+ records, kev-cut\.json, after CVE-\d{4}-\d+\); the previous data is unchanged$/,
    );
    expect(await rows('vulndb_kev')).toBe(1404);
  });

  it("import of a zip archive (OSV's all.zip) reads it in place; a broken entry fails naming the entry, and changes nothing", async () => {
    await vulndbCommand(['import', OSV_NPM_ZIP]);
    expect(output).toEqual([`osv ${OSV_NPM_ZIP}: 100 records read; 100 inserted, 0 updated, 0 deleted, 0 unchanged`]);
    const entries = osvEntries(105).slice(100);
    const [name, content] = entries[2]!;
    entries[2] = [name, content.slice(0, 200)];
    const broken = tmp.write('osv-broken.zip', await zipOf(entries));
    await expect(vulndbCommand(['import', broken])).rejects.toThrow(
      new RegExp(
        `^osv .*osv-broken\\.zip: FAILED: .+ \\(byte \\d+, after 2 records, osv-broken\\.zip/${name.replace(/\./g, '\\.')}, after ${entries[1]![0].replace('.json', '')}\\); the previous data is unchanged$`,
      ),
    );
    expect(await rows('vulndb_osv_advisories')).toBe(100);
  });

  it('sync imports the configured locations; stats prints JSON', async () => {
    process.env.CONTROLGRAPH_VULNDB_SOURCES = `kev=${KEV_JSON}`;
    // The live catalog came from the CSV: the sync applies the JSON (nothing differs), a second finds it unchanged.
    await vulndbCommand(['sync']);
    expect(output).toEqual([`kev ${KEV_JSON}: 1404 records read; 0 inserted, 0 updated, 0 deleted, 1404 unchanged`]);
    output.length = 0;
    await vulndbCommand(['sync', '--source', 'kev']);
    expect(output).toEqual([`kev ${KEV_JSON}: unchanged (1404 records)`]);
    delete process.env.CONTROLGRAPH_VULNDB_SOURCES;
    await vulndbCommand(['sync']);
    expect(output[1]).toBe('no vulnerability sources configured (CONTROLGRAPH_VULNDB_SOURCES)');
    await vulndbCommand(['stats']);
    const stats = JSON.parse(output[2]!);
    expect(stats.counts).toMatchObject({ kev: 1404, epss: 1404, nvd_cves: 70 });
    expect(stats.sources[0]).toMatchObject({ source: 'kev', origin: 'cli', records: 1404 });
  });

  it('refuses wrong usage with the help text', async () => {
    await expect(vulndbCommand(['import'])).rejects.toThrow(/takes one file/);
    await expect(vulndbCommand(['import', KEV_JSON, '--source', 'cisa'])).rejects.toThrow(/--source must be one of kev, epss, nvd, osv/);
    await expect(vulndbCommand(['import', KEV_JSON, '--colour', 'red'])).rejects.toThrow(/unknown option --colour/);
    await expect(vulndbCommand(['export'])).rejects.toThrow(/unknown vulndb command "export"/);
    expect(vulndbHelp.split('\n')[2]).toBe('Imports and syncs the vulnerability store (CISA KEV, FIRST EPSS, NVD, OSV) in DATABASE_URL.');
  });
});
