// Issue 23 item 3, re-audits do only what changed: on each database, an estate of BENCH_NODES nodes
// (100,000 by default) and 1.5 times as many edges ingested through the API, then
// 1. the first audit (every node evaluated and its findings written);
// 2. a re-audit with nothing changed (goal: at most a tenth of the first);
// 3. a re-audit after 1 % of the nodes changed through the API, as a discovery would change them: a new
//    configurationStateId and a tag (goal: at most a fifth of the first).
// Each duration is the run's own, started_at to finished_at (what GET /findings/runs/{id} reports),
// with the run's resources_evaluated and resources_unchanged. `npm run bench -- incremental-audit`.
import { ADMIN, api, postGraph, postInBatches, printTable, scratchDatabase, serviceEnv, signIn, startServer } from './lib.js';
import { estate } from './graph-data.js';

/** Starts an audit and waits for it; returns the finished run. */
export async function auditRun(base, token, t) {
  const run = await api(base, token, 'POST', `${t}/findings/run`, {});
  for (;;) {
    let finished;
    try {
      finished = await api(base, token, 'GET', `${t}/findings/runs/${run.job_id}`);
    } catch (error) {
      // A kept-alive poll connection reset while the server stays up (seen on PGlite, bench/compliance.js).
      if (error?.cause?.code !== 'ECONNRESET') throw error;
      continue;
    }
    if (finished.status === 'failed') throw new Error(`audit failed: ${finished.error}`);
    if (finished.status === 'succeeded') return finished;
    await new Promise((r) => setTimeout(r, 200));
  }
}

export const seconds = (run) => (new Date(run.finished_at) - new Date(run.started_at)) / 1000;

/** Every hundredth node written again as AWS Config reports a change: a new state id, here with a tag. */
export async function changeOnePercent(base, token, t, nodes) {
  const changed = nodes
    .filter((_, i) => i % 100 === 0)
    .map((n) => ({
      ...n,
      properties: { ...n.properties, configurationStateId: `${n.properties.configurationStateId ?? ''}-changed` },
      tags: { ...n.tags, 'bench-revision': '2' },
    }));
  await postInBatches(base, token, t, 'nodes', changed);
  return changed.length;
}

export async function benchIncrementalAudit({ kinds, count = Number(process.env.BENCH_NODES ?? 100_000) }) {
  const rows = [];
  const { nodes, edges } = estate(count, Math.round(count * 1.5));
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    const server = await startServer(serviceEnv(database.url, { CONTROLGRAPH_WORKER_POLL_MS: '100', CONTROLGRAPH_BODY_LIMIT_BYTES: String(64 * 1024 * 1024) }));
    try {
      const login = await signIn(server.base, ADMIN);
      const t = `/api/v1/tenants/${login.tenant_id}`;
      await postGraph(server.base, login.token, t, { nodes, edges });

      const first = await auditRun(server.base, login.token, t);
      const unchanged = await auditRun(server.base, login.token, t);
      const changed = await changeOnePercent(server.base, login.token, t, nodes);
      const onePercent = await auditRun(server.base, login.token, t);

      const base = seconds(first);
      const row = (measure, run, goal) => ({
        database: kind,
        measure,
        seconds: +seconds(run).toFixed(2),
        evaluated: run.stats.resources_evaluated,
        unchanged: run.stats.resources_unchanged ?? null,
        findings: `+${run.stats.findings_created} -${run.stats.findings_resolved} ~${run.stats.findings_reopened}`,
        ratio: +(seconds(run) / base).toFixed(3),
        goal,
      });
      rows.push(row(`first audit (${nodes.length} nodes, ${edges.length} edges)`, first, ''));
      rows.push(row('re-audit, nothing changed', unchanged, '<= 0.1'));
      rows.push(row(`re-audit, ${changed} nodes (1 %) changed`, onePercent, '<= 0.2'));
    } finally {
      await server.stop();
      await database.drop();
    }
  }
  printTable('Incremental audits: a re-audit against the first audit of the same estate', rows);
  return rows;
}
