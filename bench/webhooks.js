// Webhook delivery (issue 7), on each database, against a local receiver that verifies every request's
// signature the way a receiver should (verifyWebhook: HMAC over the raw body, constant-time compare,
// 300 s tolerance):
// 1. throughput: an audit over BENCH_WEBHOOK_NODES synthetic nodes writes one finding.created per
//    violation to the outbox; deliveries per second = deliveries / (last received - first received);
// 2. delay from a change to its delivery: findings resolved one at a time through the API for
//    `duration` seconds (about 10 a second); delay = arrival at the receiver - the event's timestamp
//    (the time of the change's transaction), p50 and p99.
// Workers: on PostgreSQL one API/scheduler process and 2 worker processes (CONTROLGRAPH_ROLES); PGlite
// admits one process per database, so there the API and its worker share one process.
// Run `npm run build` first (npm run bench does). Standalone: `node bench/webhooks.js`.
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { api, pgUrl, postInBatches, printTable, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';
import { estate } from './graph-data.js';
import { verifyWebhook } from '../dist/modules/integrations/receiver.js';

const SECRET = 'whsec_YmVuY2gtd2ViaG9vay1zZWNyZXQtMDEyMzQ1Njc4OQ==';

/** A receiver on loopback that verifies each delivery and records when it arrived. */
async function startSignedReceiver() {
  const received = new Map();
  let invalid = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      try {
        const event = verifyWebhook({ secret: SECRET, headers: req.headers, rawBody: Buffer.concat(chunks) });
        // Duplicates (at-least-once) are dropped by the idempotency id, as a receiver should.
        if (!received.has(event.delivery_id)) received.set(event.delivery_id, { type: event.type, timestamp: Date.parse(event.timestamp), at });
        res.writeHead(200).end('ok');
      } catch {
        invalid++;
        res.writeHead(400).end('bad signature');
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    received,
    invalid: () => invalid,
    ofType: (type) => [...received.values()].filter((r) => r.type === type),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function until(what, probe, timeoutMs, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

export async function benchWebhooks({ kinds, duration, nodes: count = Number(process.env.BENCH_WEBHOOK_NODES ?? 3000) }) {
  const rows = [];
  const { nodes } = estate(count, 0);
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    const receiver = await startSignedReceiver();
    const env = serviceEnv(database.url, {
      CONTROLGRAPH_VULNDB_SEED: 'off',
      CONTROLGRAPH_WORKER_POLL_MS: '100',
      CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      CONTROLGRAPH_BODY_LIMIT_BYTES: String(64 * 1024 * 1024),
    });
    const servers = [];
    try {
      const main = await startServer(kind === 'postgres' ? { ...env, CONTROLGRAPH_ROLES: 'api,scheduler' } : env);
      servers.push(main);
      if (kind === 'postgres') {
        for (let i = 0; i < 2; i++) servers.push(await startServer({ ...env, CONTROLGRAPH_ROLES: 'worker,api' }));
      }
      const workers = kind === 'postgres' ? '2 worker processes' : '1 process (API and worker)';
      const login = await signIn(main.base);
      const t = `/api/v1/tenants/${login.tenant_id}`;
      await api(main.base, login.token, 'POST', `${t}/integrations`, {
        type: 'webhook',
        name: 'bench receiver',
        config: { url: receiver.url, secret: SECRET, events: ['finding.created', 'finding.resolved'] },
      });

      // 1. Throughput: one audit, one delivery per new finding.
      await postInBatches(main.base, login.token, t, 'nodes', nodes);
      const run = await api(main.base, login.token, 'POST', `${t}/findings/run`, {});
      const finished = await until(
        'the audit',
        async () => {
          const r = await api(main.base, login.token, 'GET', `${t}/findings/runs/${run.job_id}`);
          return r.status === 'succeeded' || r.status === 'failed' ? r : undefined;
        },
        600_000,
        200,
      );
      if (finished.status !== 'succeeded') throw new Error(`audit failed: ${finished.error}`);
      const expected = finished.stats.findings_created;
      await until(`${expected} deliveries`, () => (receiver.ofType('finding.created').length >= expected ? true : undefined), 600_000);
      const created = receiver.ofType('finding.created');
      const first = Math.min(...created.map((r) => r.at));
      const last = Math.max(...created.map((r) => r.at));
      const firstEvent = Math.min(...created.map((r) => r.timestamp));
      rows.push({
        database: kind,
        measure: `deliveries of ${expected} finding.created (one audit)`,
        value: Math.round(expected / Math.max((last - first) / 1000, 0.001)),
        // The audit runs on the same workers while its first events are delivered.
        unit: `deliveries/s (${((last - firstEvent) / 1000).toFixed(1)} s from the first event to the last delivery; the audit itself took ${((Date.parse(finished.finished_at) - Date.parse(finished.started_at)) / 1000).toFixed(1)} s)`,
        workers,
      });

      // 2. Delay from a change (a finding resolved through the API) to its delivery.
      const open = await api(main.base, login.token, 'GET', `${t}/findings?status=open&per_page=500`);
      const ids = open.items.map((f) => f.id);
      const deadline = Date.now() + duration * 1000;
      let resolved = 0;
      for (const id of ids) {
        if (Date.now() > deadline) break;
        await api(main.base, login.token, 'POST', `${t}/findings/${encodeURIComponent(id)}/resolve`, {});
        resolved++;
        await new Promise((r) => setTimeout(r, 100));
      }
      await until(`${resolved} finding.resolved deliveries`, () => (receiver.ofType('finding.resolved').length >= resolved ? true : undefined), 120_000);
      const delays = receiver
        .ofType('finding.resolved')
        .map((r) => r.at - r.timestamp)
        .sort((a, b) => a - b);
      rows.push({
        database: kind,
        measure: `change to delivery, ${resolved} findings resolved one at a time`,
        value: percentile(delays, 0.5),
        unit: `ms p50 (p99 ${percentile(delays, 0.99)} ms, max ${delays.at(-1)} ms)`,
        workers,
      });
      if (receiver.invalid()) throw new Error(`${receiver.invalid()} deliveries failed signature verification`);
    } finally {
      for (const server of servers.reverse()) await server.stop();
      await receiver.close();
      await database.drop();
    }
  }
  printTable('Webhook deliveries to a local signed receiver', rows);
  return rows;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchWebhooks({ kinds: pgUrl() ? ['pglite', 'postgres'] : ['pglite'], duration: Number(process.env.BENCH_DURATION ?? 10) });
}
