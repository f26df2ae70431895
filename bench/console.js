// Issue 24: the console at 100,000 findings in this machine's Chromium. On each database: BENCH_NODES
// nodes (100,000 by default, about 117,000 findings) loaded through the API and audited, then, in a
// fresh browser context each time (cold HTTP cache, signed in through POST /auth/session):
// - cold load of /findings until its first page of rows is on screen (goal: under 1.5 s);
// - a filter change (severity) until the filtered rows are on screen (goal: under 500 ms);
// and the initial JavaScript of the build, gzip (goal: under 300 KB). `npm run bench -- console`.
/* global document, MutationObserver */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ADMIN, postGraph, printTable, root, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';
import { estate } from './graph-data.js';
import { auditRun } from './incremental-audit.js';
import { buildConsoleIfStale } from '../scripts/web/build-console.mjs';
import { launchChromium } from '../scripts/web/chromium.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** The scripts index.html loads before anything else: its entry module and the modules it preloads. */
export function initialJavaScript(dist = join(root, 'web', 'dist')) {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((match) => match[1]);
  const sizes = files.map((file) => {
    const body = readFileSync(join(dist, file));
    return { file, bytes: body.length, gzip: gzipSync(body, { level: 9 }).length };
  });
  return { files: sizes, gzip: sizes.reduce((sum, size) => sum + size.gzip, 0), bytes: sizes.reduce((sum, size) => sum + size.bytes, 0) };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function signedInPage(browser, base) {
  const context = await browser.newContext({ baseURL: base });
  const answer = await context.request.post('/api/v1/auth/session', {
    data: { username: ADMIN.username, password: ADMIN.password },
    headers: { 'x-controlgraph-csrf': '1' },
  });
  if (!answer.ok()) throw new Error(`sign-in: ${answer.status()} ${await answer.text()}`);
  return { context, page: await context.newPage() };
}

/** Rows of the findings table (not its header row). */
const findingRows = (page) => page.locator('table tbody tr');

/**
 * `inPage`: also take, in the page, the time from its navigation's start to the first row in the DOM
 * (a MutationObserver; without Playwright's polling and its calls between the processes), which
 * bench/console-ab.js compares.
 */
/** Records in the page (`globalThis.__firstRowMs`) when the first table row enters the DOM, timed from the navigation's start. */
export function watchFirstRow(page) {
  return page.addInitScript(() => {
    const observer = new MutationObserver(() => {
      if (document.querySelector('table tbody tr')) {
        globalThis.__firstRowMs = performance.now();
        observer.disconnect();
      }
    });
    document.addEventListener('DOMContentLoaded', () => observer.observe(document.body, { childList: true, subtree: true }));
  });
}

export async function coldLoad(browser, base, { inPage = false } = {}) {
  const { context, page } = await signedInPage(browser, base);
  if (inPage) await watchFirstRow(page);
  const started = performance.now();
  await page.goto('/findings');
  await findingRows(page).first().waitFor({ state: 'visible', timeout: 60_000 });
  const loadMs = performance.now() - started;
  const firstRowMs = inPage ? await page.evaluate(() => globalThis.__firstRowMs) : undefined;
  // The filter as a user changes it: the severity control of the findings screen, then the first row
  // of the answer (the URL carries the filter; the rows change when the answer arrives).
  const before = await findingRows(page).first().textContent();
  await page.getByRole('combobox', { name: 'Severity' }).click({ force: true });
  const low = page.getByRole('option', { name: 'Low' });
  await low.waitFor();
  // From the moment the user picks the value (the dropdown's opening is not the filter's latency).
  const filterStarted = performance.now();
  await low.click();
  await page.keyboard.press('Escape');
  await page.waitForURL(/severity=low/);
  // Runs in the page (a function, not a string: the console's CSP forbids eval): the first row
  // changed and nothing is loading any more.
  await page.waitForFunction(
    (previous) => {
      const row = document.querySelector('table tbody tr');
      return Boolean(row) && row.textContent !== previous && !document.querySelector('[aria-busy="true"]');
    },
    before,
    { timeout: 30_000 },
  );
  const filterMs = performance.now() - filterStarted;
  await context.close();
  return { loadMs, filterMs, firstRowMs };
}

export async function benchConsole({ kinds }) {
  await buildConsoleIfStale({ quiet: true });
  const count = Number(process.env.BENCH_NODES ?? 100_000);
  const { nodes, edges } = estate(count, Math.round(count * 1.5));
  const rows = [];
  const js = initialJavaScript();
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    const server = await startServer(serviceEnv(database.url, { CONTROLGRAPH_WORKER_POLL_MS: '100', CONTROLGRAPH_BODY_LIMIT_BYTES: String(64 * 1024 * 1024) }));
    const browser = await launchChromium();
    try {
      const login = await signIn(server.base);
      const t = `/api/v1/tenants/${login.tenant_id}`;
      await postGraph(server.base, login.token, t, { nodes, edges });
      const audit = await auditRun(server.base, login.token, t);
      // One warm-up round (the service's first queries plan and cache), then the measured rounds.
      await coldLoad(browser, server.base);
      const rounds = [];
      for (let i = 0; i < ROUNDS; i++) rounds.push(await coldLoad(browser, server.base));
      const findings = audit.stats.findings_created;
      rows.push(
        {
          database: kind,
          findings,
          measure: 'findings screen, cold load to first rows (median ms)',
          value: Math.round(median(rounds.map((r) => r.loadMs))),
          worst: Math.round(Math.max(...rounds.map((r) => r.loadMs))),
          goal: '< 1500',
        },
        {
          database: kind,
          findings,
          measure: 'filter change to filtered rows (median ms)',
          value: Math.round(median(rounds.map((r) => r.filterMs))),
          worst: Math.round(Math.max(...rounds.map((r) => r.filterMs))),
          goal: '< 500',
        },
      );
    } finally {
      await browser.close();
      await server.stop();
      await database.drop();
    }
  }
  rows.push({ database: '', findings: '', measure: `initial JavaScript, gzip KB (${js.files.length} files)`, value: Math.round(js.gzip / 1024), worst: '', goal: '< 300' });
  printTable(`Console in Chromium (${ROUNDS} rounds after one warm-up, each in a fresh browser context)`, rows);
  return { rows, initialJavaScript: js };
}
