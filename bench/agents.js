// Host agent benchmarks (issue 9), on each database:
// 1. ingest of agent reports with 2,000 packages and 500 processes (gzip JSON, POST
//    /api/v1/agents/{id}/report) against the service in its own process: latency p50/p99 and reports
//    per second, for a host's first report (2,000 packages written and matched against the Debian
//    advisories of test/fixtures/agents) and for the steady state (the same hosts reporting again
//    with a new scan: what a fleet does every 5 minutes);
// 2. the agent's own cost for one cycle on this machine, as it ships (issue 28): the bundled agent
//    (scripts/build-agent.mjs --js-only, run by node) and, when dist-agent/ has it, the linux-x64
//    single executable, each `--once` with every collector in its own process: CPU of the cycle and
//    of the whole process, duration, and the process's peak resident memory (its summary's cpu_ms,
//    process_cpu_ms, duration_ms, max_rss_mb). Goals: under 300 ms CPU a cycle, under 80 MB RSS.
// The 2,000 packages are the 710 real dpkg packages of test/fixtures/agents plus 1,290 generated
// ones of the same shape. Run `npm run build` first. Standalone: `node bench/agents.js`.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { api, printTable, root, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';
import { defaultKinds } from './http.js';

const FIXTURES = join(root, 'test', 'fixtures', 'agents');
const CLI = join(root, 'bin', 'controlgraph.js');
const PACKAGES = 2_000;
const PROCESSES = 500;
const CONCURRENCY = 4;

const CPU_GOAL_MS = 300;
const RSS_GOAL_MB = 80;

function run(args, env = {}, command = [process.execPath, CLI]) {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], [...command.slice(1), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

function packages() {
  const real = readFileSync(join(FIXTURES, 'dpkg-packages-with-source.tsv'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [name, version, arch, sourceName, sourceVersion] = line.split('\t');
      return { name, version, source: 'dpkg', installed_at: '2025-06-01T00:00:00.000Z', cves: [], arch, source_name: sourceName, source_version: sourceVersion };
    });
  const out = [...real];
  for (let i = 0; out.length < PACKAGES; i++) {
    const base = real[i % real.length];
    out.push({ ...base, name: `bench-${base.name}-${i}`, source_name: `bench-${base.source_name}-${i}` });
  }
  return out;
}

function processes() {
  return Array.from({ length: PROCESSES }, (_, i) => ({
    pid: 1000 + i,
    name: `worker-${i % 40}`,
    user: i % 3 ? 'www-data' : 'root',
    cmdline: `/usr/bin/worker --queue q${i % 40} --concurrency 4`,
    cpu_percent: (i % 17) / 10,
    memory_mb: 20 + (i % 50),
    status: 'sleeping',
    parent_pid: 1,
    start_time: '2026-11-20T08:00:00.000Z',
  }));
}

/** Gzip bodies of reports: host h's s-th scan. */
function reportBody(h, s, pkgs, procs, baseTime) {
  const machine = `bench${String(h).padStart(27, '0')}`;
  const report = {
    schema_version: '1.0',
    agent_id: `bench-agent-${h}`,
    agent_version: '0.1.0',
    scan_id: randomUUID(),
    scanned_at: new Date(baseTime + s * 300_000).toISOString(),
    host: { machine_id: machine, hostname: `bench-host-${h}`, fqdn: null, region: null, boot_time: '2026-11-20T08:00:00.000Z', cloud: null },
    os: {
      family: 'linux',
      id: 'debian',
      version_id: '12',
      name: 'Debian GNU/Linux',
      version: '12 (bookworm)',
      pretty_name: 'Debian GNU/Linux 12 (bookworm)',
      kernel: '6.1.0-26-amd64',
      arch: 'x86_64',
    },
    collectors: [],
    packages: pkgs,
    processes: procs,
    listening_ports: [{ port: 22, protocol: 'tcp', address: '0.0.0.0', pid: 800, process: 'sshd' }],
    local_users: [{ username: 'root', uid: 0, gid: 0, home: '/root', shell: '/bin/bash', last_login: null, password_status: 'locked' }],
    config_checks: [{ id: 'sshd.permit_root_login', value: 'no', source: '/etc/ssh/sshd_config:33' }],
  };
  return { agent: report.agent_id, body: gzipSync(JSON.stringify(report)) };
}

/**
 * Report bodies of a fleet of `hosts`, made before any clock starts (the load generator shares the
 * machine's cores): each host's first report, and `rounds` later scans of every host, round by round.
 */
export function fleetReports(hosts, rounds, baseTime) {
  const pkgs = packages();
  const procs = processes();
  const first = Array.from({ length: hosts }, (_, h) => reportBody(h, 0, pkgs, procs, baseTime));
  const scans = [];
  for (let s = 1; s <= rounds; s++) for (let h = 0; h < hosts; h++) scans.push(reportBody(h, s, pkgs, procs, baseTime));
  return { first, scans };
}

/** The headers of a gzip JSON agent report sent with an API key. */
export const reportHeaders = (key) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' });

const pct = (sorted, p) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 10) / 10;

/** Sends the bodies with CONCURRENCY in flight until they run out or the time is up. */
async function drive(base, key, bodies, durationMs) {
  const latencies = [];
  let next = 0;
  let failed = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  const worker = async () => {
    while (next < bodies.length && performance.now() < deadline) {
      const { agent, body } = bodies[next++];
      const t0 = performance.now();
      const res = await fetch(`${base}/api/v1/agents/${agent}/report`, {
        method: 'POST',
        headers: reportHeaders(key),
        body,
      });
      const json = await res.json();
      if (res.status !== 200 || json.ignored) failed++;
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { reports: latencies.length, failed, p50_ms: pct(latencies, 0.5), p99_ms: pct(latencies, 0.99), reports_per_s: Math.round((latencies.length / seconds) * 10) / 10 };
}

/** The agent as it ships: the bundle (built here into `dir`) and the x64 executable when built. */
function agentBuilds(dir) {
  execFileSync(process.execPath, [join(root, 'scripts', 'build-agent.mjs'), '--js-only', '--out', join(dir, 'bundle')], { stdio: 'ignore' });
  const builds = [['bundle (node controlgraph-agent.cjs)', [process.execPath, join(dir, 'bundle', 'controlgraph-agent.cjs')]]];
  const exe = join(root, 'dist-agent', 'controlgraph-agent-linux-x64');
  if (process.platform === 'linux' && process.arch === 'x64' && existsSync(exe)) builds.push(['executable (controlgraph-agent-linux-x64)', [exe]]);
  return builds;
}

export async function benchAgents({ kinds = defaultKinds(), duration = 10, hosts = Number(process.env.BENCH_AGENT_HOSTS ?? 40) } = {}) {
  const results = {};
  const rows = [];
  const { first, scans: steady } = fleetReports(hosts, 6, Date.now() - 7 * 24 * 3600_000);
  console.log(`agents: report of ${PACKAGES} packages and ${PROCESSES} processes is ${first[0].body.length} bytes gzip`);

  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    const env = serviceEnv(database.url, { CONTROLGRAPH_VULNDB_SEED: 'off' });
    const imported = await run(['vulndb', 'import', join(FIXTURES, 'osv-debian12-host-subset.json.gz')], env);
    if (imported.code !== 0) throw new Error(`vulndb import: ${imported.stderr}`);
    const server = await startServer(env);
    const stateDir = mkdtempSync(join(tmpdir(), 'cg-bench-agent-'));
    try {
      const login = await signIn(server.base);
      const { key } = await api(server.base, login.token, 'POST', `/api/v1/tenants/${login.tenant_id}/api-keys`, { name: 'bench agents', permissions: ['agents:write'] });
      const firstRun = await drive(server.base, key, first, Math.max(duration, 60) * 1000);
      const steadyRun = await drive(
        server.base,
        key,
        steady.filter((b) => Number(b.agent.split('-').pop()) < Math.max(1, firstRun.reports)),
        duration * 1000,
      );
      results[kind] = { first_report: firstRun, steady: steadyRun, agent_cycle: {} };
      rows.push({ kind, case: 'first report of a host', ...firstRun });
      rows.push({ kind, case: 'steady (new scan, same host)', ...steadyRun });
      const keyFile = join(stateDir, 'api-key');
      writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
      for (const [name, command] of agentBuilds(stateDir)) {
        const cycle = await run(['--once', '--server', server.base, '--api-key-file', keyFile, '--state-dir', join(stateDir, name)], {}, command);
        if (cycle.code !== 0) throw new Error(`${name} --once exited ${cycle.code}: ${cycle.stderr.slice(-500)}`);
        const summary = JSON.parse(cycle.stdout);
        const agent = {
          packages: summary.collectors.packages.items,
          processes: summary.collectors.processes.items,
          cycle_ms: summary.duration_ms,
          cpu_ms: summary.cpu_ms,
          process_cpu_ms: summary.process_cpu_ms,
          peak_rss_mb: summary.max_rss_mb,
          report_gzip_bytes: summary.report_bytes.gzip,
          file_bytes: statSync(command.at(-1)).size,
          cpu_goal_met: summary.cpu_ms < CPU_GOAL_MS,
          rss_goal_met: summary.max_rss_mb < RSS_GOAL_MB,
        };
        results[kind].agent_cycle[name] = agent;
        rows.push({
          kind,
          case: `${name} --once, every collector (${agent.packages} packages, ${agent.processes} processes)`,
          cycle_ms: agent.cycle_ms,
          cpu_ms: agent.cpu_ms,
          process_cpu_ms: agent.process_cpu_ms,
          peak_rss_mb: agent.peak_rss_mb,
          goals: `${agent.cpu_goal_met ? 'ok' : 'OVER'} cpu < ${CPU_GOAL_MS} ms, ${agent.rss_goal_met ? 'ok' : 'OVER'} rss < ${RSS_GOAL_MB} MB`,
        });
      }
    } finally {
      await server.stop();
      await database.drop();
      rmSync(stateDir, { recursive: true, force: true });
    }
  }
  printTable(`Agent report ingest (${PACKAGES} packages, ${PROCESSES} processes, ${CONCURRENCY} in flight) and one agent cycle`, rows);
  return results;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  await benchAgents({ duration: Number(process.env.BENCH_DURATION ?? 10) });
}
