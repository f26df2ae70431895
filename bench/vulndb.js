// Vulnerability store: import rate per source (records/s), latency of GET /api/v1/vulndb/cve/{id}
// (autocannon against the service in its own process), and the time to match a 2,000-package host
// inventory. Inputs are the repository's real fixtures (test/fixtures/vulndb); for EPSS, NVD and OSV
// they are scaled up to realistic sizes by generating more records of the same shape (documented per
// row). Run `npm run build` first. Standalone: `node bench/vulndb.js` (PGlite; PostgreSQL too when
// BENCH_DATABASE_URL or TEST_DATABASE_URL is set).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import pino from 'pino';
import { openDatabase } from '../dist/platform/db/database.js';
import { migrate } from '../dist/platform/db/migrator.js';
import { systemClock } from '../dist/platform/clock.js';
import { importLocation } from '../dist/modules/vulndb/import/importer.js';
import { createVulnMatcher } from '../dist/modules/vulndb/matching/matcher.js';
import { load, pgUrl, printTable, root, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';

const log = pino({ level: 'silent' });
const FIXTURES = join(root, 'test', 'fixtures', 'vulndb');
const fixture = (name) => join(FIXTURES, name);

/** Generated inputs of realistic size, built from the real fixtures. */
function buildInputs(dir) {
  // EPSS: the published daily file has ~300,000 rows; the fixture is a 20,000-row sample of it.
  const sample = gunzipSync(readFileSync(fixture('epss-sample-20000.csv.gz')))
    .toString('utf8')
    .trim()
    .split('\n')
    .slice(1);
  const rows = ['#model_version:v2025.03.14,score_date:2025-05-18T00:00:00+0000', 'cve,epss,percentile'];
  for (let i = 0; i < 300_000; i++) {
    const [, epss, percentile] = sample[i % sample.length].split(',');
    rows.push(`CVE-${2000 + Math.floor(i / 90_000)}-${String(10_000 + (i % 90_000)).padStart(5, '0')},${epss},${percentile}`);
  }
  const epss = join(dir, 'epss-300000.csv.gz');
  writeFileSync(epss, gzipSync(rows.join('\n') + '\n'));
  // NVD: the 70 real records of the sample feed, cloned under new ids into a 7,000-record feed.
  const feed = JSON.parse(readFileSync(fixture('nvd-cve-2.0-sample-feed.json'), 'utf8'));
  const vulnerabilities = [];
  for (let copy = 0; copy < 100; copy++) {
    for (const v of feed.vulnerabilities) vulnerabilities.push({ cve: { ...v.cve, id: `CVE-${3000 + copy}-${v.cve.id.split('-')[2]}` } });
  }
  const nvd = join(dir, 'nvd-7000.json');
  writeFileSync(nvd, JSON.stringify({ ...feed, resultsPerPage: vulnerabilities.length, totalResults: vulnerabilities.length, vulnerabilities }));
  // OSV: the 833 real Debian and npm advisories, cloned under new ids into 8,330.
  const debian = JSON.parse(gunzipSync(readFileSync(fixture('osv-debian12-host-subset.json.gz'))).toString('utf8'));
  const npm = JSON.parse(readFileSync(fixture('osv-npm-ghsa-subset.json'), 'utf8'));
  const advisories = [];
  for (let copy = 0; copy < 10; copy++) for (const a of [...debian, ...npm]) advisories.push(copy === 0 ? a : { ...a, id: `${a.id}-copy${copy}` });
  const osv = join(dir, 'osv-8330.json');
  writeFileSync(osv, JSON.stringify(advisories));
  return [
    { source: 'kev', input: 'KEV catalog 2025.08.25 (real, 1,404)', location: fixture('known_exploited_vulnerabilities.json') },
    { source: 'epss', input: 'EPSS CSV.gz, 300,000 rows (real scores, generated ids)', location: epss },
    { source: 'nvd', input: 'NVD 2.0 feed, 7,000 records (70 real, cloned)', location: nvd },
    { source: 'osv', input: 'OSV array, 8,330 advisories (833 real, cloned)', location: osv },
  ];
}

function inventory() {
  const host = readFileSync(fixture('dpkg-packages-with-source.tsv'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [name, version, , source, sourceVersion] = line.split('\t');
      return { ecosystem: 'Debian:12', name, version, sourceName: source || name, sourceVersion: sourceVersion || version };
    });
  const sbom = JSON.parse(readFileSync(fixture('juice-shop-11.1.2.cdx-1.2.json'), 'utf8')).components.map((c) => ({
    ecosystem: 'npm',
    name: c.group ? `${c.group}/${c.name}` : c.name,
    version: c.version,
  }));
  const extra = Array.from({ length: 2000 - host.length - sbom.length }, (_, i) => ({ ecosystem: 'PyPI', name: `package-${i}`, version: '1.0.0' }));
  return [...host, ...sbom, ...extra];
}

export async function benchVulndb({ kinds, duration = Number(process.env.BENCH_DURATION ?? 10) }) {
  const imports = [];
  const http = [];
  const matching = [];
  const dir = mkdtempSync(join(tmpdir(), 'cg-bench-vulndb-'));
  try {
    const inputs = buildInputs(dir);
    for (const kind of kinds) {
      const database = await scratchDatabase(kind);
      try {
        const handle = await openDatabase(database.url);
        try {
          await migrate(handle.db);
          for (const { source, input, location } of inputs) {
            const started = performance.now();
            const result = await importLocation({ db: handle.db, clock: systemClock, log }, location, { source, trigger: 'cli' });
            const seconds = (performance.now() - started) / 1000;
            if (result.status !== 'succeeded') throw new Error(`${source} import failed: ${result.error}`);
            const again = performance.now();
            const second = await importLocation({ db: handle.db, clock: systemClock, log }, location, { source, trigger: 'cli' });
            const reSeconds = (performance.now() - again) / 1000;
            imports.push({
              database: kind,
              source,
              input,
              records: result.records,
              seconds: +seconds.toFixed(2),
              records_per_s: Math.round(result.records / seconds),
              reimport_records_per_s: Math.round(second.records / reSeconds),
            });
          }
          const matcher = createVulnMatcher(handle.db);
          const packages = inventory();
          await matcher.matchPackages(packages);
          const times = [];
          let hits = 0;
          for (let i = 0; i < 5; i++) {
            const started = performance.now();
            const results = await matcher.matchPackages(packages);
            times.push(performance.now() - started);
            hits = results.filter((r) => r.matches.length).length;
          }
          times.sort((a, b) => a - b);
          matching.push({ database: kind, packages: packages.length, vulnerable_packages: hits, median_ms: Math.round(times[2]), max_ms: Math.round(times[4]) });
        } finally {
          await handle.close();
        }
        // The service with the vulndb module, from this file's --serve mode.
        const server = await startServer(serviceEnv(database.url), [fileURLToPath(import.meta.url), '--serve']);
        try {
          const login = await signIn(server.base);
          const headers = { authorization: `Bearer ${login.token}` };
          const cve = `${server.base}/api/v1/vulndb/cve/CVE-2021-44228`;
          const probe = await fetch(cve, { headers });
          if (!probe.ok) throw new Error(`GET ${cve}: ${probe.status}`);
          await load({ url: cve, headers, duration: 2 });
          http.push({ database: kind, route: 'GET /vulndb/cve/CVE-2021-44228 (KEV+EPSS+NVD record)', ...(await load({ url: cve, headers, duration })) });
          http.push({
            database: kind,
            route: 'GET /vulndb/check/CVE-2021-44228',
            ...(await load({ url: `${server.base}/api/v1/vulndb/check/CVE-2021-44228`, headers, duration })),
          });
        } finally {
          await server.stop();
        }
      } finally {
        await database.drop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable('Vulnerability imports (first import; re-import of the same file)', imports);
  printTable('Matching a 2,000-package inventory (710 Debian 12 host + 840 juice-shop npm + 450 PyPI)', matching);
  printTable('Vulnerability lookups (autocannon, 10 connections)', http);
  return { imports, matching, http };
}

async function serve() {
  const { loadConfig } = await import('../dist/config.js');
  const { openDeps, createWorker, createScheduler } = await import('../dist/runtime.js');
  const { buildApp } = await import('../dist/app.js');
  const { modules } = await import('../dist/modules/index.js');
  const { vulndbModule } = await import('../dist/modules/vulndb/module.js');
  const all = modules.some((m) => m.name === 'vulndb') ? modules : [...modules, vulndbModule];
  const config = loadConfig();
  const deps = await openDeps(config);
  for (const module of all) await module.onStart?.(deps);
  const app = await buildApp(deps, { modules: all });
  const worker = createWorker(deps, all);
  const scheduler = createScheduler(deps, all);
  await worker.start();
  await scheduler.start();
  await app.listen({ port: config.port, host: config.host });
  process.once('SIGTERM', async () => {
    await app.close();
    await scheduler.stop();
    await worker.stop();
    await deps.database.close();
    process.exit(0);
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--serve') {
    await serve();
  } else {
    await benchVulndb({ kinds: pgUrl() ? ['pglite', 'postgres'] : ['pglite'] });
  }
}
