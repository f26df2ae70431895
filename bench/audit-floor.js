// What bounds an audit before it writes anything: reading the estate's nodes page by page (as the
// audit does) against evaluating every built-in rule over them in memory. `npm run bench -- audit-floor`,
// on PGlite and, with BENCH_DATABASE_URL or TEST_DATABASE_URL, PostgreSQL.
import { sql } from 'kysely';
import { printTable, scratchDatabase } from './lib.js';
import { estate } from './graph-data.js';
import { bareInsertNodes, bareWorkspace } from './bare-rows.js';
import { defaultKinds } from './http.js';
import { openDatabase } from '../dist/platform/db/database.js';
import { migrate } from '../dist/platform/db/migrator.js';
import { builtinRules, compiledCondition } from '../dist/modules/compliance/rule-catalog.js';
import { evaluateBatch } from '../dist/modules/compliance/audit/evaluate.js';

export async function benchAuditFloor({ kinds = defaultKinds(), count = Number(process.env.BENCH_NODES ?? 100_000) } = {}) {
  const { nodes } = estate(count, 0);
  const rulesByType = new Map();
  for (const rule of builtinRules()) {
    const list = rulesByType.get(rule.resource_type) ?? [];
    list.push({ rule, compiled: compiledCondition(rule) });
    rulesByType.set(rule.resource_type, list);
  }
  const rows = [];
  for (const kind of kinds) {
    const database = await scratchDatabase(kind);
    const handle = await openDatabase(database.url);
    try {
      await migrate(handle.db);
      const scope = await bareWorkspace(handle.pool);
      const ws = scope.ws;
      await bareInsertNodes(handle.pool, scope, nodes);
      await handle.pool.query('ANALYZE nodes');
      const types = [...rulesByType.keys()];
      // The audit's own read: keyset pages of 1,000 with properties and tags.
      const t0 = performance.now();
      const read = [];
      for (let after = ''; ; ) {
        const page = await handle.db
          .selectFrom('nodes')
          .select(['id', 'type', 'native_id', 'name', 'region', 'account_id', 'properties', 'tags'])
          .where('workspace_id', '=', ws)
          .where('type', '=', sql`ANY(${types}::text[])`)
          .where('id', '>', after)
          .orderBy('id')
          .limit(1000)
          .execute();
        if (page.length === 0) break;
        read.push(page);
        after = page[page.length - 1].id;
      }
      const readMs = performance.now() - t0;
      const t1 = performance.now();
      let evaluations = 0;
      for (const page of read) evaluations += evaluateBatch(page, rulesByType).evaluations;
      const evalMs = performance.now() - t1;
      const best = evaluations / (Math.max(readMs, evalMs) / 1000);
      const memory = evaluations / (evalMs / 1000);
      rows.push({
        database: kind,
        nodes: read.reduce((n, p) => n + p.length, 0),
        evaluations,
        read_s: +(readMs / 1000).toFixed(2),
        evaluate_s: +(evalMs / 1000).toFixed(2),
        best_ratio_without_writes: +(best / memory).toFixed(2),
      });
    } finally {
      await handle.close();
      await database.drop();
    }
  }
  printTable('Audit floor: reading the nodes against evaluating them (no writes)', rows);
  return rows;
}
