// Shared helpers of the benchmarks: start the real service in a child process, drive it with
// autocannon, make a throw-away database of either kind. Benchmarks import the compiled code (dist/).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import autocannon from 'autocannon';
import pg from 'pg';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The bootstrap admin of the services the benchmarks start. */
export const ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };

/**
 * The environment of a benchmark's service on `databaseUrl`: the bootstrap ADMIN and rate limits off
 * (the benchmarks measure the work, not the 429 path), then `extra`.
 */
export function serviceEnv(databaseUrl, extra = {}) {
  return {
    DATABASE_URL: databaseUrl,
    CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username,
    CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password,
    CONTROLGRAPH_RATE_LIMITS: 'off',
    ...extra,
  };
}

export function pgUrl() {
  return process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? null;
}

export async function freePort() {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/** A fresh database URL of the given kind, and a function that removes it. */
export async function scratchDatabase(kind) {
  if (kind === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'cg-bench-'));
    return { url: `pglite://${dir}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const admin = pgUrl();
  const name = `cg_bench_${process.pid}_${Date.now()}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * Starts `controlgraph serve` (or the script and arguments of `argv`) in its own process and waits
 * for /healthz.
 */
export async function startServer(env, argv = [join(root, 'bin', 'controlgraph.js'), 'serve']) {
  const port = await freePort();
  const artifacts = mkdtempSync(join(tmpdir(), 'cg-bench-artifacts-'));
  const child = spawn(process.execPath, argv, {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ARTIFACT_STORE: `file://${artifacts}`, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  // A server that dies mid-run shows up as a failed request; say why it died.
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (!stopping) console.error(`bench: the server exited (code ${code}, signal ${signal})`);
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${base}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    base,
    pid: child.pid,
    async stop() {
      stopping = true;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(artifacts, { recursive: true, force: true });
    },
  };
}

/** A JSON call to the service: throws on an error status; null for an empty answer (204). */
/** Posts `items` to `${t}/${kind}` (nodes or edges) 5,000 at a time, as a discovery would write a large estate. */
export async function postInBatches(base, token, t, kind, items) {
  for (let i = 0; i < items.length; i += 5000) await api(base, token, 'POST', `${t}/${kind}`, { [kind]: items.slice(i, i + 5000) });
}

/** Posts a graph: its nodes, then its edges (which name them), each 5,000 at a time. */
export async function postGraph(base, token, t, { nodes, edges }) {
  await postInBatches(base, token, t, 'nodes', nodes);
  await postInBatches(base, token, t, 'edges', edges);
}

export async function api(base, token, method, path, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** The session of the bootstrap admin (`token`, `tenant_id`). */
export function signIn(base, admin = ADMIN) {
  return api(base, null, 'POST', '/api/v1/auth/token', admin);
}

/** Runs autocannon and returns requests per second and latency percentiles (ms). */
export async function load(options) {
  const result = await autocannon({ connections: 10, duration: 10, ...options });
  if (result.non2xx > 0 || result.errors > 0) {
    console.warn(`  ${options.title ?? options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return {
    rps: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
  };
}

export function printTable(title, rows) {
  console.log(`\n${title}`);
  console.table(rows);
}
