// npm run bench [-- <suite> ...]: runs the benchmark suites (all by default) on PGlite and, when
// BENCH_DATABASE_URL or TEST_DATABASE_URL is set, on PostgreSQL; writes bench/results/latest.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchHttp, defaultKinds } from './http.js';
import { benchQueue } from './queue.js';
import { benchAuth } from './auth.js';
import { benchCompliance } from './compliance.js';
import { benchVulndb } from './vulndb.js';
import { root } from './lib.js';

const suites = {
  http: (opts) => benchHttp(opts),
  queue: (opts) => benchQueue(opts),
  auth: (opts) => benchAuth(opts),
  compliance: (opts) => benchCompliance(opts),
  vulndb: (opts) => benchVulndb(opts),
  // Suites of later modules, loaded when asked for.
  exports: async (opts) => (await import('./exports.js')).benchExports(opts),
  webhooks: async (opts) => (await import('./webhooks.js')).benchWebhooks(opts),
  agents: async (opts) => (await import('./agents.js')).benchAgents(opts),
  paths: async (opts) => (await import('./paths.js')).benchPaths(opts),
  // /healthz and another tenant's GET /nodes during a 100,000-node audit, against no audit.
  'audit-isolation': async (opts) => (await import('./audit-isolation.js')).benchAuditIsolation(opts),
  // What bounds an audit before its writes (reading against evaluating the nodes): by name only.
  'audit-floor': async (opts) => (await import('./audit-floor.js')).benchAuditFloor(opts),
  // First audit against an unchanged and a 1 %-changed re-audit (issue 23 item 3): by name only.
  'incremental-audit': async (opts) => (await import('./incremental-audit.js')).benchIncrementalAudit(opts),
  // The console's first requests at 100,000 findings and the re-audit ratios (issue 23): by name only.
  dashboard: async (opts) => (await import('./dashboard.js')).benchDashboard(opts),
  // The console in Chromium at 100,000 findings: cold load, filter change, initial JS (issue 24): by name only.
  console: async (opts) => (await import('./console.js')).benchConsole(opts),
  // A Prowler OCSF file and an AWS Config snapshot of 100,000 records each, imported twice (issue 27).
  imports: async (opts) => (await import('./imports.js')).benchImports(opts),
  // The 60 s mixed load on the scale-out deployment: only when asked for by name.
  load: async () => (await import('./load.js')).benchLoad(),
};

const requested = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = requested.length
  ? requested
  : Object.keys(suites).filter((n) => n !== 'load' && n !== 'audit-floor' && n !== 'incremental-audit' && n !== 'dashboard' && n !== 'console');
const unknown = names.filter((n) => !suites[n]);
if (unknown.length) {
  console.error(`unknown suite(s): ${unknown.join(', ')}; known: ${Object.keys(suites).join(', ')}`);
  process.exit(2);
}
const options = { kinds: defaultKinds(), duration: Number(process.env.BENCH_DURATION ?? 10) };
const results = { at: new Date().toISOString(), node: process.version, kinds: options.kinds };
for (const name of names) results[name] = await suites[name](options);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'latest.json'), JSON.stringify(results, null, 2));
