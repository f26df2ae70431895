// Not a suite: where a cold load of the findings screen spends its time. Loads BENCH_NODES nodes
// (20,000 by default) into a scratch PostgreSQL database, then opens /findings in fresh contexts
// (PROFILE_ROUNDS, 4 by default) and prints, per round, when each request started and ended, the
// first paint and the first row in the DOM (ms from the navigation's start); the last round's CPU
// profile is written to PROFILE_OUT (console.cpuprofile; open it in Chromium's DevTools). Set
// CONTROLGRAPH_CONSOLE_DIR to profile another build, e.g. one built with `minify: false` for names.
// `node bench/console-profile.js` (after `npm run build`).
import { writeFileSync } from 'node:fs';
import { postGraph, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';
import { estate } from './graph-data.js';
import { auditRun } from './incremental-audit.js';
import { signedInPage, watchFirstRow } from './console.js';
import { launchChromium } from '../scripts/web/chromium.mjs';

const count = Number(process.env.BENCH_NODES ?? 20_000);
const rounds = Number(process.env.PROFILE_ROUNDS ?? 4);
const out = process.env.PROFILE_OUT ?? 'console.cpuprofile';
const { nodes, edges } = estate(count, Math.round(count * 1.5));
const database = await scratchDatabase('postgres');
const consoleDir = process.env.CONTROLGRAPH_CONSOLE_DIR ? { CONTROLGRAPH_CONSOLE_DIR: process.env.CONTROLGRAPH_CONSOLE_DIR } : {};
const server = await startServer(serviceEnv(database.url, { CONTROLGRAPH_WORKER_POLL_MS: '100', CONTROLGRAPH_BODY_LIMIT_BYTES: String(64 * 1024 * 1024), ...consoleDir }));
const browser = await launchChromium();
try {
  const login = await signIn(server.base);
  const t = `/api/v1/tenants/${login.tenant_id}`;
  await postGraph(server.base, login.token, t, { nodes, edges });
  await auditRun(server.base, login.token, t);
  for (let round = 0; round < rounds; round++) {
    const { context, page } = await signedInPage(browser, server.base);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await watchFirstRow(page);
    await cdp.send('Profiler.start');
    await page.goto('/findings');
    await page.locator('table tbody tr').first().waitFor({ state: 'visible', timeout: 60_000 });
    const { profile } = await cdp.send('Profiler.stop');
    const timing = await page.evaluate(() => ({
      firstRow: Math.round(globalThis.__firstRowMs),
      firstPaint: Math.round(performance.getEntriesByType('paint')[0]?.startTime ?? 0),
      requests: performance
        .getEntriesByType('resource')
        .map((r) => `${Math.round(r.startTime)}-${Math.round(r.responseEnd)} ${r.name.replace(/^https?:\/\/[^/]+/, '').slice(0, 70)}`),
    }));
    console.log(`round ${round + 1}: first paint ${timing.firstPaint} ms, first row ${timing.firstRow} ms\n  ${timing.requests.join('\n  ')}`);
    if (round === rounds - 1) writeFileSync(out, JSON.stringify(profile));
    await context.close();
  }
} finally {
  await browser.close();
  await server.stop();
  await database.drop();
}
