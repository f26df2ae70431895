// npm run bench -- load: a realistic mix for BENCH_LOAD_SECONDS (60) against the scale-out deployment
// of docs/deployment.md: 2 API and 2 worker processes (worker,scheduler) on one PostgreSQL (and Redis
// for rate limits when REDIS_URL is set). Reads findings, ingests nodes, accepts and revokes risks,
// takes host-agent reports (a new scan of 2,000 packages from a known host) and keeps SSE clients
// connected, through both API processes. Reports throughput, p50/p99 per route,
// errors (anything but 2xx and 429) and each process's peak RSS.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { estate } from './graph-data.js';
import { api, pgUrl, printTable, scratchDatabase, signIn, startServer } from './lib.js';
import { fleetReports, reportHeaders } from './agents.js';

const ADMIN = { username: 'load-admin', password: 'load-admin-password' };
const FINDING_NODES = 5_000;
const AGENT_HOSTS = 8;
const AGENT_SCANS = 30;

/** Nodes from the rule fixtures (real AWS Config items), most violating a rule, with ids under `prefix`. */
function nodes(count, prefix, offset = 0) {
  return estate(count, 0, 7 + offset).nodes.map((n, i) => ({ ...n, native_id: `${prefix}-${offset + i}-${n.native_id}` }));
}

/** Peak resident set size (VmHWM) of a process, in MiB. */
function peakRssMiB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return null;
  }
}

function run(options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 4, ...options }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

function summarise(route, result) {
  const byStatus = result.statusCodeStats ?? {};
  const limited = Number(byStatus['429']?.count ?? 0);
  const ok = Object.entries(byStatus)
    .filter(([s]) => s.startsWith('2'))
    .reduce((n, [, v]) => n + Number(v.count), 0);
  const total = Object.values(byStatus).reduce((n, v) => n + Number(v.count), 0);
  return {
    route,
    rps: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    ok,
    rate_limited: limited,
    errors: total - ok - limited + result.errors,
  };
}

export async function benchLoad({ seconds = Number(process.env.BENCH_LOAD_SECONDS ?? 60) } = {}) {
  if (!pgUrl()) {
    console.log('load: needs PostgreSQL (BENCH_DATABASE_URL or TEST_DATABASE_URL); skipped');
    return { skipped: 'no PostgreSQL' };
  }
  const database = await scratchDatabase('postgres');
  const env = {
    DATABASE_URL: database.url,
    CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username,
    CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password,
    CONTROLGRAPH_VULNDB_SEED: 'off',
    // Capacity is measured without the per-tenant limits unless asked (an enterprise tenant gets 1,000
    // requests a minute, far below what the deployment serves).
    CONTROLGRAPH_RATE_LIMITS: process.env.BENCH_RATE_LIMITS ?? 'off',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  };
  const first = await startServer({ ...env, CONTROLGRAPH_ROLES: 'api' });
  const processes = [first, await startServer({ ...env, CONTROLGRAPH_ROLES: 'api' })];
  for (let i = 0; i < 2; i++) processes.push(await startServer({ ...env, CONTROLGRAPH_ROLES: 'worker,scheduler' }));
  const apis = [processes[0].base, processes[1].base];
  const sse = [];
  try {
    const login = await signIn(apis[0], ADMIN);
    const tenant = await api(apis[0], login.token, 'POST', '/api/v1/account/tenants', { name: 'load', plan: 'enterprise' });
    const session = await api(apis[0], login.token, 'POST', '/api/v1/auth/select-tenant', { tenant_id: tenant.id });
    const token = session.token;
    const base = `/api/v1/tenants/${tenant.id}`;
    for (let i = 0; i < FINDING_NODES; i += 2500) {
      await api(apis[0], token, 'POST', `${base}/nodes`, { nodes: nodes(2500, 'seed', i) });
    }
    const audit = await api(apis[0], token, 'POST', `${base}/findings/run`, {});
    for (;;) {
      const status = await api(apis[0], token, 'GET', `${base}/findings/runs/${audit.job_id}`);
      if (['succeeded', 'failed'].includes(status.status)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const findings = (await api(apis[0], token, 'GET', `${base}/findings?per_page=500`)).items.map((f) => f.id);
    console.log(`load: ${findings.length} findings to work on; ${seconds} s of mixed load through 2 API processes`);

    // Agent hosts report once before the clock starts (a first report matches every package); the run
    // sends their later scans, what a fleet does every few minutes.
    const { key: agentKey } = await api(apis[0], token, 'POST', `${base}/api-keys`, { name: 'load agents', permissions: ['agents:write'] });
    const agentHeaders = reportHeaders(agentKey);
    const { first, scans } = fleetReports(AGENT_HOSTS, AGENT_SCANS, Date.now() - 86_400_000);
    for (const { agent, body } of first) {
      const res = await fetch(`${apis[0]}/api/v1/agents/${agent}/report`, { method: 'POST', headers: agentHeaders, body });
      if (res.status !== 200) throw new Error(`first agent report: ${res.status} ${await res.text()}`);
    }
    let scan = 0;

    // SSE clients on both API processes for the whole run.
    let sseEvents = 0;
    // Opened together: a stream's headers may wait for its first heartbeat.
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const controller = new AbortController();
        sse.push(controller);
        const res = await fetch(`${apis[i % 2]}${base}/findings/stream`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
        void (async () => {
          try {
            for await (const chunk of res.body)
              sseEvents += (
                Buffer.from(chunk)
                  .toString()
                  .match(/^data:/gm) ?? []
              ).length;
          } catch {
            // closed at the end
          }
        })();
      }),
    );

    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    let ingest = 0;
    // Bodies prepared up front (building nodes per request would measure the load generator).
    const batches = Array.from({ length: 400 }, (_, b) => JSON.stringify({ nodes: nodes(50, 'load', b * 50) }));
    let accept = 0;
    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const mix = [
      ['GET /findings (page of 50)', { connections: 6, requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `${base}/findings?per_page=50&sort=-severity` }) }] }],
      [
        'GET /findings/{id}',
        {
          connections: 4,
          requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `${base}/findings/${encodeURIComponent(findings[Math.floor(Math.random() * findings.length)])}` }) }],
        },
      ],
      [
        'POST /nodes (50 nodes)',
        { connections: 2, requests: [{ method: 'POST', setupRequest: (req) => ({ ...req, path: `${base}/nodes`, body: batches[ingest++ % batches.length] }) }] },
      ],
      [
        'POST+DELETE /findings/{id}/accept',
        {
          connections: 2,
          requests: [
            {
              method: 'POST',
              setupRequest: (req, context) => {
                context.finding = findings[accept++ % findings.length];
                return {
                  ...req,
                  path: `${base}/findings/${encodeURIComponent(context.finding)}/accept`,
                  body: JSON.stringify({ reason: 'load test', owner: 'bench', expires_at: expires }),
                };
              },
            },
            {
              method: 'DELETE',
              setupRequest: (req, context) => ({
                ...req,
                path: `${base}/findings/${encodeURIComponent(context.finding)}/accept`,
                body: undefined,
                headers: { authorization: headers.authorization },
              }),
            },
          ],
        },
      ],
      [
        'POST /agents/{id}/report (new scan)',
        {
          connections: 2,
          headers: agentHeaders,
          requests: [
            {
              method: 'POST',
              setupRequest: (req) => {
                const { agent, body } = scans[scan++ % scans.length];
                return { ...req, path: `/api/v1/agents/${agent}/report`, body };
              },
            },
          ],
        },
      ],
    ];
    // An audit every 5 s turns the ingested nodes into findings: their events reach the SSE clients.
    let audits = 0;
    const auditing = setInterval(() => {
      audits++;
      api(apis[audits % 2], token, 'POST', `${base}/findings/run`, {}).catch(() => undefined);
    }, 5_000);
    const results = await Promise.all(
      mix.flatMap(([route, options]) =>
        apis.map((url) => run({ url, duration: seconds, headers, ...options, connections: Math.max(1, Math.round(options.connections / 2)) }).then((r) => [route, r])),
      ),
    );
    clearInterval(auditing);
    const rows = [];
    for (const [route] of mix) {
      const parts = results.filter(([r]) => r === route).map(([, r]) => summarise(route, r));
      rows.push({
        route,
        rps: parts.reduce((n, p) => n + p.rps, 0),
        p50_ms: Math.max(...parts.map((p) => p.p50_ms)),
        p99_ms: Math.max(...parts.map((p) => p.p99_ms)),
        ok: parts.reduce((n, p) => n + p.ok, 0),
        rate_limited: parts.reduce((n, p) => n + p.rate_limited, 0),
        errors: parts.reduce((n, p) => n + p.errors, 0),
      });
    }
    const memory = processes.map((p, i) => ({ process: i < 2 ? `api ${i + 1}` : `worker ${i - 1}`, peak_rss_mib: peakRssMiB(p.pid) }));
    printTable(`Mixed load, ${seconds} s, 2 API + 2 worker processes on PostgreSQL (p50/p99 are the worse of the two API processes)`, rows);
    printTable('Peak RSS per process', memory);
    console.log(`SSE: 20 clients received ${sseEvents} events; ${audits} audits started during the run`);
    return { seconds, rows, memory, sse_clients: 20, sse_events: sseEvents, audits };
  } finally {
    for (const controller of sse) controller.abort();
    for (const p of processes) await p.stop();
    await database.drop();
  }
}
