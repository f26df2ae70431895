// Issue 23: the requests the console opens with, against GET /auth/me in the same run. On each
// database, BENCH_NODES nodes (100,000 by default; BENCH_FINDINGS=1000000 sizes the estate for about
// a million findings instead) and 1.5 times as many edges through the API, a first audit, then each
// request below with 10 connections for BENCH_DURATION seconds: req/s, p50, p99 and the ratio of its
// req/s to /auth/me's. Goals on PostgreSQL at 100,000 findings: p99 under 100 ms and at least 2 % of
// /auth/me's req/s; at a million, p99 under 250 ms. Then the re-audit ratios of item 3 on the same
// estate: nothing changed (goal: at most a tenth of the first audit) and 1 % changed (a fifth).
// Each request is measured twice (BENCH_READ_CACHE=both, the default): against the service as it runs,
// with its read cache, and against a second process on the same database with the cache off
// (CONTROLGRAPH_READ_CACHE_BYTES=0), where every request is computed: what a dashboard costs on the
// first request after a write. BENCH_READ_CACHE=on or off measures one.
// `npm run bench -- dashboard`.
import { api, load, postGraph, printTable, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';
import { estate } from './graph-data.js';
import { auditRun, changeOnePercent, seconds } from './incremental-audit.js';

/** About 1.17 findings per node in this estate (117,094 of 100,000). */
const FINDINGS_PER_NODE = 1.17;

function requests(t, day, future, cursor, groupId) {
  return [
    ['GET /auth/me', '/api/v1/auth/me'],
    ['GET /findings?per_page=50', `${t}/findings?per_page=50`],
    ['GET /findings?per_page=50&search=encrypt', `${t}/findings?per_page=50&search=encrypt`],
    ['GET /findings?per_page=50&cursor=… (page 2)', `${t}/findings?per_page=50&cursor=${encodeURIComponent(cursor)}`],
    ['GET /findings?per_page=50&sla=overdue', `${t}/findings?per_page=50&sla=overdue`],
    ['GET /findings/scored?per_page=50', `${t}/findings/scored?per_page=50`],
    ['GET /findings/grouped', `${t}/findings/grouped`],
    ['GET /findings?group_id=… (a group)', `${t}/findings?per_page=50&group_id=${encodeURIComponent(groupId)}`],
    ['GET /controls/status', `${t}/controls/status`],
    ['GET /controls/gaps', `${t}/controls/gaps`],
    ['GET /controls/history?interval=day', `${t}/controls/history?interval=day&from=${day}`],
    ['GET /findings/trend', `${t}/findings/trend?from=${day}`],
    ['GET /controls/forecast?date=…', `${t}/controls/forecast?date=${future}`],
  ];
}

export async function benchDashboard({ kinds, duration }) {
  const findingsGoal = process.env.BENCH_FINDINGS ? Number(process.env.BENCH_FINDINGS) : null;
  const count = findingsGoal ? Math.round(findingsGoal / FINDINGS_PER_NODE) : Number(process.env.BENCH_NODES ?? 100_000);
  const rows = [];
  const audits = [];
  const { nodes, edges } = estate(count, Math.round(count * 1.5));
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    // A million findings take this machine most of an hour to load and audit: the one sign-in must outlive it.
    const server = await startServer(
      serviceEnv(database.url, { CONTROLGRAPH_WORKER_POLL_MS: '100', CONTROLGRAPH_BODY_LIMIT_BYTES: String(64 * 1024 * 1024), CONTROLGRAPH_ACCESS_TOKEN_TTL: '12h' }),
    );
    try {
      const login = await signIn(server.base);
      const t = `/api/v1/tenants/${login.tenant_id}`;
      await postGraph(server.base, login.token, t, { nodes, edges });
      progress(`${kind}: ${nodes.length} nodes and ${edges.length} edges loaded`);
      const first = await auditRun(server.base, login.token, t);
      progress(`${kind}: first audit ${seconds(first).toFixed(1)} s, ${first.stats.findings_created} findings`);
      if (kind === 'postgres') await vacuum(database.url);

      const firstPage = await api(server.base, login.token, 'GET', `${t}/findings?per_page=50`);
      const groups = await api(server.base, login.token, 'GET', `${t}/findings/grouped?per_page=1`);
      const day = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
      const future = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
      const paths = requests(t, day, future, firstPage.next_cursor, groups.items[0].group_id);
      const measured = { kind, findings: first.stats.findings_created, token: login.token, paths, duration };
      if (readCacheModes().includes('on')) rows.push(...(await measure(server.base, 'on', measured)));
      if (readCacheModes().includes('off')) {
        // A second process on the same database with the cache off: every request computed.
        const computing = await startServer(serviceEnv(database.url, { CONTROLGRAPH_ROLES: 'api', CONTROLGRAPH_ACCESS_TOKEN_TTL: '12h', CONTROLGRAPH_READ_CACHE_BYTES: '0' }));
        try {
          rows.push(...(await measure(computing.base, 'off', measured)));
        } finally {
          await computing.stop();
        }
      }

      const unchanged = await auditRun(server.base, login.token, t);
      const changed = await changeOnePercent(server.base, login.token, t, nodes);
      const onePercent = await auditRun(server.base, login.token, t);
      for (const [measure, run, goal] of [
        [`first audit (${nodes.length} nodes)`, first, ''],
        ['re-audit, nothing changed', unchanged, '<= 0.1'],
        [`re-audit, ${changed} nodes (1 %) changed`, onePercent, '<= 0.2'],
      ]) {
        audits.push({
          database: kind,
          measure,
          seconds: +seconds(run).toFixed(2),
          evaluated: run.stats.resources_evaluated,
          ratio: +(seconds(run) / seconds(first)).toFixed(3),
          goal,
        });
      }
    } finally {
      await server.stop();
      await database.drop();
    }
  }
  printTable('Dashboard requests (10 connections) against GET /auth/me', rows);
  printTable('Re-audits against the first audit of the same estate', audits);
  return { requests: rows, audits };
}

/** BENCH_READ_CACHE: on (as the service runs), off (every request computed) or both (the default). */
function readCacheModes() {
  const mode = process.env.BENCH_READ_CACHE ?? 'both';
  return mode === 'both' ? ['on', 'off'] : [mode];
}

/** Each request with 10 connections for the duration against one server; /auth/me first, as the reference. */
async function measure(base, cache, { kind, findings, token, paths, duration }) {
  const p99Goal = findings >= 1_000_000 ? 250 : 100;
  const rows = [];
  let me = null;
  for (const [title, path] of paths) {
    const result = await load({ url: `${base}${path}`, headers: { authorization: `Bearer ${token}` }, duration, title });
    if (!me) me = result.rps;
    rows.push({
      database: kind,
      findings,
      measure: title,
      cache,
      'req/s': result.rps,
      p50_ms: result.p50_ms,
      p99_ms: result.p99_ms,
      'vs /auth/me': `${((100 * result.rps) / me).toFixed(1)} %`,
      errors: result.non2xx,
      goal: title === 'GET /auth/me' ? '' : `p99 < ${p99Goal} ms, >= 2 %`,
    });
  }
  return rows;
}

/** Where a long run is (a million findings take most of an hour), on stderr beside the tables on stdout. */
const progress = (text) => console.error(`dashboard: ${new Date().toISOString().slice(11, 19)} ${text}`);

/** What the figures were measured after: VACUUM ANALYZE, as autovacuum would do soon after a bulk load. */
async function vacuum(url) {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('VACUUM ANALYZE');
  await client.end();
}
