// What bounds an audit: reading the estate's nodes page by page (as the audit does) against
// evaluating every built-in rule over them in memory, then the audit engine itself, then the least the
// database needs to store what that audit wrote: its finding rows and outbox events, copied back in
// with one INSERT ... SELECT each from an unlogged copy, so no client, driver or parameter encoding
// takes part. If that floor alone is longer than the in-memory evaluation divided by the goal's 0.3,
// no client-side change can reach the goal on this machine. `npm run bench -- audit-floor`, on PGlite
// and, with BENCH_DATABASE_URL or TEST_DATABASE_URL, PostgreSQL.
import { randomUUID } from 'node:crypto';
import { printTable, scratchDatabase } from './lib.js';
import { estate } from './graph-data.js';
import { bareInsertNodes, bareWorkspace } from './bare-rows.js';
import { defaultKinds } from './http.js';
import { openDatabase } from '../dist/platform/db/database.js';
import { migrate } from '../dist/platform/db/migrator.js';
import { builtinRules } from '../dist/modules/compliance/rule-catalog.js';
import { compileRulesByType, evaluateBatch } from '../dist/modules/compliance/audit/evaluate.js';
import { runAudit } from '../dist/modules/compliance/audit/engine.js';
import { nodePageReader } from '../dist/modules/compliance/audit/node-pages.js';
import { FRAMEWORKS } from '../dist/modules/compliance/rules/rule-types.js';

/** Milliseconds an async step takes. */
async function timed(step) {
  const t0 = performance.now();
  await step();
  return performance.now() - t0;
}

/**
 * The audit engine over the workspace (no queue, no HTTP), then the same rows stored again by the
 * server alone. A CHECKPOINT before each timed write gives both the same start: the first change
 * to a page after a checkpoint logs the whole page.
 */
async function auditAndWriteFloor(handle, scope) {
  const { pool, db } = handle;
  const rules = builtinRules();
  await pool.query('CHECKPOINT');
  let stats;
  const auditMs = await timed(async () => {
    stats = await runAudit({
      db,
      clock: { now: () => new Date() },
      scope: { tenantId: scope.tenant, workspaceId: scope.ws },
      runId: randomUUID(),
      frameworks: [...FRAMEWORKS],
      enabled: [...FRAMEWORKS],
      rules,
    });
  });
  // Every column but the generated severity_rank, in table order. The rows refer to their rules'
  // texts (finding_texts, a row per rule): those stay, as an audit stores them before its batches.
  const { rows: columns } = await pool.query(
    `SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) AS list
       FROM information_schema.columns WHERE table_name = 'finding_rows' AND is_generated = 'NEVER'`,
  );
  const findingColumns = columns[0].list;
  await pool.query(`CREATE UNLOGGED TABLE floor_findings AS SELECT ${findingColumns} FROM finding_rows`);
  await pool.query(`CREATE UNLOGGED TABLE floor_events AS SELECT id, tenant_id, workspace_id, type, data, created_at FROM outbox_events`);
  const { rows: counted } = await pool.query(`SELECT (SELECT count(*) FROM floor_findings)::int AS findings, (SELECT count(*) FROM floor_events)::int AS events`);
  await pool.query('TRUNCATE finding_rows, outbox_events CASCADE');
  await pool.query('CHECKPOINT');
  const findingsMs = await timed(() => pool.query(`INSERT INTO finding_rows (${findingColumns}) SELECT ${findingColumns} FROM floor_findings`));
  await pool.query('CHECKPOINT');
  const eventsMs = await timed(() =>
    pool.query(`INSERT INTO outbox_events (id, tenant_id, workspace_id, type, data, created_at) SELECT id, tenant_id, workspace_id, type, data, created_at FROM floor_events`),
  );
  return { stats, auditMs, findingsMs, eventsMs, findings: counted[0].findings, events: counted[0].events };
}

export async function benchAuditFloor({ kinds = defaultKinds(), count = Number(process.env.BENCH_NODES ?? 100_000) } = {}) {
  const { nodes } = estate(count, 0);
  const rulesByType = compileRulesByType(builtinRules());
  const rows = [];
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    const handle = await openDatabase(database.url);
    try {
      await migrate(handle.db);
      const scope = await bareWorkspace(handle.pool);
      const ws = scope.ws;
      await bareInsertNodes(handle.pool, scope, nodes);
      const types = [...rulesByType.keys()];
      // The audit's own reader: keyset pages of 1,000 with properties and tags, on a table nothing
      // has analyzed since the ingest (as after a real one).
      const readPage = nodePageReader(handle.db, { tenantId: scope.tenant, workspaceId: ws }, types, 1000);
      const t0 = performance.now();
      const read = [];
      for (let page = await readPage(); page; page = await readPage(page)) read.push(page.nodes);
      const readMs = performance.now() - t0;
      const t1 = performance.now();
      let evaluations = 0;
      for (const page of read) evaluations += evaluateBatch(page, rulesByType).evaluations;
      const evalMs = performance.now() - t1;
      const floor = await auditAndWriteFloor(handle, scope);
      const writeMs = floor.findingsMs + floor.eventsMs;
      const seconds = (ms) => +(ms / 1000).toFixed(2);
      // Ratios to the in-memory rate: evaluating takes evalMs, so a step of x ms allows at most evalMs / x.
      const bound = (ms) => +(evalMs / ms).toFixed(2);
      rows.push({
        database: kind,
        nodes: read.reduce((n, p) => n + p.length, 0),
        evaluations,
        read_s: seconds(readMs),
        evaluate_s: seconds(evalMs),
        best_ratio_without_writes: bound(Math.max(readMs, evalMs)),
        audit_engine_s: seconds(floor.auditMs),
        audit_engine_ratio: bound(floor.auditMs),
        findings: floor.findings,
        events: floor.events,
        store_findings_s: seconds(floor.findingsMs),
        store_events_s: seconds(floor.eventsMs),
        best_ratio_with_writes: bound(Math.max(readMs, evalMs, writeMs)),
        goal_allows_s: seconds(evalMs / 0.3),
      });
    } finally {
      await handle.close();
      await database.drop();
    }
  }
  printTable('Audit floor: reading, evaluating, the audit engine, and the server storing what it wrote', rows);
  return rows;
}
