// Not a suite: an A/B of two console builds (or two service builds) against one estate, for changes
// whose effect is smaller than the machine's drift between two `npm run bench -- console` runs. Loads
// BENCH_NODES nodes (20,000 by default) into one scratch database, starts two services on it, A and B,
// and alternates cold loads and filter changes between them (AB_ROUNDS each, after a warm-up).
//   AB_A_CONSOLE, AB_B_CONSOLE: the console folders each serves (CONTROLGRAPH_CONSOLE_DIR; web/dist by default);
//   AB_A_BIN, AB_B_BIN: the service each runs (a bin/controlgraph.js; this checkout's by default).
// `node bench/console-ab.js` (after `npm run build`); BENCH_KINDS=pglite is not possible (one database, two services).
import { join } from 'node:path';
import { ADMIN, postGraph, root, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';
import { estate } from './graph-data.js';
import { auditRun } from './incremental-audit.js';
import { coldLoad } from './console.js';
import { launchChromium } from '../scripts/web/chromium.mjs';

const ROUNDS = Number(process.env.AB_ROUNDS ?? 15);
const count = Number(process.env.BENCH_NODES ?? 20_000);
const env = (database, side) => {
  const dir = process.env[`AB_${side}_CONSOLE`];
  return serviceEnv(database.url, {
    CONTROLGRAPH_WORKER_POLL_MS: '100',
    CONTROLGRAPH_BODY_LIMIT_BYTES: String(64 * 1024 * 1024),
    ...(dir ? { CONTROLGRAPH_CONSOLE_DIR: dir } : {}),
  });
};
const bin = (side) => [process.env[`AB_${side}_BIN`] ?? join(root, 'bin', 'controlgraph.js'), 'serve'];
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const { nodes, edges } = estate(count, Math.round(count * 1.5));
const database = await scratchDatabase('postgres');
const a = await startServer(env(database, 'A'), bin('A'));
let b;
let browser;
try {
  const login = await signIn(a.base);
  const t = `/api/v1/tenants/${login.tenant_id}`;
  await postGraph(a.base, login.token, t, { nodes, edges });
  const audit = await auditRun(a.base, login.token, t);
  b = await startServer(env(database, 'B'), bin('B'));
  await signIn(b.base, ADMIN);
  browser = await launchChromium();
  const sides = { A: { server: a, rounds: [] }, B: { server: b, rounds: [] } };
  for (const side of Object.values(sides)) await coldLoad(browser, side.server.base);
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which goes first, so a drift in the machine's load falls on both.
    for (const name of i % 2 ? ['B', 'A'] : ['A', 'B']) sides[name].rounds.push(await coldLoad(browser, sides[name].server.base, { inPage: true }));
  }
  console.log(`${audit.stats.findings_created} findings, ${ROUNDS} rounds each, alternating`);
  for (const [name, side] of Object.entries(sides)) {
    const load = side.rounds.map((r) => Math.round(r.loadMs));
    const filter = side.rounds.map((r) => Math.round(r.filterMs));
    const inPage = side.rounds.map((r) => Math.round(r.firstRowMs));
    console.log(`${name}: cold load median ${median(load)} ms [${load.join(' ')}]; filter median ${median(filter)} ms [${filter.join(' ')}]`);
    console.log(`${name}: first row in the page, from its navigation's start: median ${median(inPage)} ms [${inPage.join(' ')}]`);
  }
} finally {
  await browser?.close();
  await b?.stop();
  await a.stop();
  await database.drop();
}
