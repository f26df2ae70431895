// Issue 20 item 3: does an audit of 100,000 nodes leave the API's latency alone? One tenant's first
// audit of the compliance suite's estate (bench/graph-data.js: 100,000 nodes, 150,000 edges, every
// built-in rule; about 800,000 evaluations and 117,000 new findings), while a prober asks /healthz and
// another tenant's GET /nodes at a fixed rate; against the same probes for the same time with no audit.
//
// The prober is open-loop: a request leaves every 1000/BENCH_PROBE_RATE ms whether or not the earlier
// ones have answered, and its latency counts from when it was due, so a stalled server shows as late
// answers instead of as fewer requests (autocannon waits for an answer before sending again).
// Knobs: BENCH_NODES (100,000), BENCH_PROBE_RATE (20 per second per endpoint), BENCH_DURATION (the
// baseline's seconds, 10), BENCH_KINDS.
import http from 'node:http';
import { api, postGraph, printTable, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';
import { estate } from './graph-data.js';

const OTHER_NODES = 200;
const SETTLE_MS = 5_000;

/** Kept-alive connections, as API clients use; a reset one counts as a failure, not as a slow answer. */
const agent = new http.Agent({ keepAlive: true });

/** One GET; resolves with the status code, 0 on failure. */
function get(url, headers) {
  return new Promise((resolve) => {
    const req = http.get(url, { headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
  });
}

/** Fires GET `url` every `intervalMs` until `until()` is true; latencies (ms, from when each was due) and failures. */
async function probe(url, headers, intervalMs, until) {
  const latencies = [];
  let failures = 0;
  const pending = [];
  const start = performance.now();
  for (let i = 0; !until(); i++) {
    const due = start + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      get(url, headers).then((status) => {
        if (status !== 200) failures++;
        latencies.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(pending);
  return summarize(latencies, failures);
}

function summarize(latencies, failures) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] : NaN);
  return { requests: sorted.length, failures, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

const ms = (v) => (Number.isFinite(v) ? Math.round(v * 10) / 10 : null);

/** Both probes side by side until `until()`. */
function probeBoth(base, other, intervalMs, until) {
  return Promise.all([
    probe(`${base}/healthz`, {}, intervalMs, until),
    probe(`${base}/api/v1/tenants/${other.tenantId}/nodes?per_page=50`, { authorization: `Bearer ${other.token}` }, intervalMs, until),
  ]);
}

export async function benchAuditIsolation({ kinds, duration, nodes: count = Number(process.env.BENCH_NODES ?? 100_000) }) {
  const rows = [];
  const intervalMs = 1000 / Number(process.env.BENCH_PROBE_RATE ?? 20);
  const { nodes, edges } = estate(count, Math.round(count * 1.5));
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    // The shipped vulnerability snapshot would load at start, beside the measurement.
    const server = await startServer(
      serviceEnv(database.url, { CONTROLGRAPH_WORKER_POLL_MS: '100', CONTROLGRAPH_BODY_LIMIT_BYTES: String(64 * 1024 * 1024), CONTROLGRAPH_VULNDB_SEED: 'off' }),
    );
    try {
      const admin = await signIn(server.base);
      const t = `/api/v1/tenants/${admin.tenant_id}`;
      await postGraph(server.base, admin.token, t, { nodes, edges });
      // The other tenant: a few hundred nodes, read by its own session.
      const created = await api(server.base, admin.token, 'POST', '/api/v1/account/tenants', { name: `bench-other-${Date.now()}` });
      const otherSession = await api(server.base, admin.token, 'POST', '/api/v1/auth/select-tenant', { tenant_id: created.id });
      await api(server.base, otherSession.token, 'POST', `/api/v1/tenants/${created.id}/nodes`, { nodes: nodes.slice(0, OTHER_NODES) });
      const other = { tenantId: created.id, token: otherSession.token };

      // What the ingest left for the background (outbox readers) settles first.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const quietUntil = performance.now() + duration * 1000;
      const [quietHealth, quietNodes] = await probeBoth(server.base, other, intervalMs, () => performance.now() >= quietUntil);

      const run = await api(server.base, admin.token, 'POST', `${t}/findings/run`, {});
      let finished = null;
      const poll = (async () => {
        for (;;) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          try {
            const state = await api(server.base, admin.token, 'GET', `${t}/findings/runs/${run.job_id}`);
            if (state.status === 'succeeded' || state.status === 'failed') return (finished = state);
          } catch (error) {
            if (error?.cause?.code !== 'ECONNRESET') throw error;
          }
        }
      })();
      const [busyHealth, busyNodes] = await probeBoth(server.base, other, intervalMs, () => finished !== null);
      await poll;
      if (finished.status !== 'succeeded') throw new Error(`audit failed: ${finished.error}`);
      const seconds = (new Date(finished.finished_at) - new Date(finished.started_at)) / 1000;
      const audit = `audit ${seconds.toFixed(1)} s, ${finished.stats.evaluations} evaluations, ${finished.stats.findings_created} findings`;
      for (const [endpoint, quiet, busy] of [
        ['GET /healthz', quietHealth, busyHealth],
        ["another tenant's GET /nodes", quietNodes, busyNodes],
      ]) {
        rows.push({
          database: kind,
          endpoint,
          'quiet p50 ms': ms(quiet.p50),
          'quiet p99 ms': ms(quiet.p99),
          'audit p50 ms': ms(busy.p50),
          'audit p99 ms': ms(busy.p99),
          'audit max ms': ms(busy.max),
          requests: `${quiet.requests} / ${busy.requests}`,
          failures: quiet.failures + busy.failures,
          audit,
        });
      }
    } finally {
      await server.stop();
      await database.drop();
    }
  }
  printTable(`API latency during a ${count}-node audit (probes every ${intervalMs} ms per endpoint)`, rows);
  return rows;
}
