import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode } from '../harness/compliance.js';
import { builtinRules } from '../../src/modules/compliance/rule-catalog.js';

/**
 * Dashboard answers kept under their read version (platform/http/read-cache.ts, migration 0038):
 * a repeated request is answered from memory, and no write, through the API or straight to the
 * database, and no passing of the time-to-live leaves an answer older than what is committed.
 */

let t: TestApp;
let tenant: TenantFixture;
let analyst: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  analyst = tenant.users['security-analyst'].token;
  const rules = builtinRules().slice(0, 6);
  await putNodes(
    t,
    analyst,
    tenant.id,
    rules.flatMap((r) => [fixtureNode(r.id, 'violating', `${r.id}-a`), fixtureNode(r.id, 'violating', `${r.id}-b`)]),
  );
  await audit(t, analyst, tenant.id);
});
afterAll(() => t.close());

const api = (path: string) => `/api/v1/tenants/${tenant.id}${path}`;
const get = (path: string, token = analyst) => call(t.app, token, { url: api(path), expect: 200 });

/** Every route that keeps its answers, with the variants the console asks for. */
const CACHED = [
  '/findings?per_page=5',
  '/findings?per_page=5&search=encrypt',
  '/findings?per_page=5&sla=overdue',
  '/findings?per_page=5&severity=HIGH&sort=-first_seen',
  '/findings/scored?per_page=5',
  '/findings/grouped?per_page=5',
  '/controls/status?per_page=5',
  '/controls/gaps?per_page=5',
  '/controls/history?interval=day&from=2026-11-01',
  '/findings/trend?from=2026-11-01',
  '/controls/forecast?date=2026-12-24',
];

describe('the read cache', () => {
  it('answers a repeated request from memory, byte for byte and with its Link header', async () => {
    for (const path of CACHED) {
      const first = await get(path);
      const second = await get(path);
      expect(first.headers['x-read-cache'], path).toBe('miss');
      expect(second.headers['x-read-cache'], path).toBe('hit');
      expect(second.body, path).toBe(first.body);
      expect(second.headers['link'], path).toBe(first.headers['link']);
      expect(second.headers['content-type'], path).toBe(first.headers['content-type']);
      expect(second.headers['x-request-id'], path).not.toBe(first.headers['x-request-id']);
    }
    const metrics = await t.deps.metrics.readCache.get();
    expect(metrics.values.find((v) => v.labels.outcome === 'hit')?.value).toBeGreaterThanOrEqual(CACHED.length);
  });

  it('shows a write through the API on the next request', async () => {
    const before = (await get('/findings?per_page=1')).json();
    expect((await get('/findings?per_page=1')).headers['x-read-cache']).toBe('hit');
    const id = before.items[0].id as string;
    await call(t.app, analyst, { method: 'POST', url: api(`/findings/${encodeURIComponent(id)}/resolve`), payload: {}, expect: 200 });
    const after = await get('/findings?per_page=1');
    expect(after.headers['x-read-cache']).toBe('miss');
    expect(after.json().total).toBe(before.total - 1);
    expect(after.json().items[0].id).not.toBe(id);
  });

  it('shows a write made straight to the database (another process, the CLI) on the next request', async () => {
    const status = (await get('/controls/status?per_page=1')).json();
    expect((await get('/controls/status?per_page=1')).headers['x-read-cache']).toBe('hit');
    // Another process resolves every HIGH finding.
    const { numUpdatedRows } = await t.deps.database.db
      .updateTable('finding_rows')
      .set({ status: 'resolved', resolved_at: t.clock.now() })
      .where('workspace_id', '=', tenant.defaultWorkspaceId)
      .where('severity', '=', 'HIGH')
      .where('status', '=', 'open')
      .executeTakeFirst();
    expect(Number(numUpdatedRows)).toBeGreaterThan(0);
    const after = await get('/controls/status?per_page=1');
    expect(after.headers['x-read-cache']).toBe('miss');
    expect(after.json().by_severity.HIGH).toBe(0);
    expect(after.json().total_findings).toBe(status.total_findings - Number(numUpdatedRows));
  });

  it('a tenant-wide setting (a disabled framework) shows on the next request', async () => {
    expect((await get('/controls/status?per_page=1')).headers['x-read-cache']).toBe('hit');
    const admin = tenant.users['tenant-admin'].token;
    await call(t.app, admin, { method: 'PUT', url: api('/settings/compliance'), payload: { frameworks: [{ id: 'soc2', enabled: false }] }, expect: 200 });
    const after = await get('/controls/status?per_page=1');
    expect(after.headers['x-read-cache']).toBe('miss');
    expect(Object.keys(after.json().by_framework)).not.toContain('soc2');
    await call(t.app, admin, { method: 'PUT', url: api('/settings/compliance'), payload: { frameworks: [{ id: 'soc2', enabled: true }] }, expect: 200 });
    expect(Object.keys((await get('/controls/status?per_page=1')).json().by_framework)).toContain('soc2');
  });

  it('computes again once the time-to-live has passed: what changes with time alone shows within it', async () => {
    expect((await get('/findings?per_page=5&sla=overdue')).headers['x-read-cache']).not.toBe(undefined);
    expect((await get('/findings?per_page=5&sla=overdue')).headers['x-read-cache']).toBe('hit');
    t.clock.advance(t.deps.config.readCacheTtlMs);
    expect((await get('/findings?per_page=5&sla=overdue')).headers['x-read-cache']).toBe('miss');
    expect((await get('/findings?per_page=5&sla=overdue')).headers['x-read-cache']).toBe('hit');
  });

  it('keeps answers apart per role and per tenant; a refused caller never reaches a kept answer', async () => {
    await get('/findings?per_page=2');
    expect((await get('/findings?per_page=2')).headers['x-read-cache']).toBe('hit');
    const viewer = await get('/findings?per_page=2', tenant.users['read-only'].token);
    expect(viewer.headers['x-read-cache']).toBe('miss');
    const other = await buildTenant(t);
    const refused = await call(t.app, other.users['security-analyst'].token, { url: api('/findings?per_page=2') });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['x-read-cache']).toBeUndefined();
    const own = await call(t.app, other.users['security-analyst'].token, { url: `/api/v1/tenants/${other.id}/findings?per_page=2`, expect: 200 });
    expect(own.headers['x-read-cache']).toBe('miss');
    expect(own.json().total).toBe(0);
  });

  it('every table the cached routes read raises the read version', async () => {
    // Tables a request reads that do not reach its answer: identity and access, the queue the worker polls.
    const unrelated = new Set([
      'users',
      'sessions',
      'memberships',
      'tenants',
      'workspaces',
      'revoked_access_tokens',
      'api_keys',
      'jobs',
      'job_schedules',
      'schedules',
      'outbox_events',
      'integration_dispatch_state',
      'read_versions',
    ]);
    const db = t.deps.database.db;
    const raising = new Set(
      (
        await sql<{ relname: string }>`
          SELECT DISTINCT c.relname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid WHERE g.tgname LIKE '%read_version%'`.execute(db)
      ).rows.map((r) => r.relname),
    );
    const reads = async () =>
      new Map(
        (await sql<{ relname: string; n: string }>`SELECT relname, (seq_scan + coalesce(idx_scan, 0))::text AS n FROM pg_stat_user_tables`.execute(db)).rows.map((r) => [
          r.relname,
          Number(r.n),
        ]),
      );
    // A fresh workspace's keys: every request is computed, none answered from memory.
    const fresh = await buildTenant(t);
    const token = fresh.users['security-analyst'].token;
    const before = await settledStats(reads);
    for (const path of CACHED) {
      const res = await call(t.app, token, { url: `/api/v1/tenants/${fresh.id}${path}`, expect: 200 });
      expect(res.headers['x-read-cache'], path).toBe('miss');
    }
    const after = await settledStats(reads);
    const read = [...after].filter(([name, n]) => n > (before.get(name) ?? 0)).map(([name]) => name);
    expect(read).toContain('finding_rows');
    expect(read.filter((name) => !raising.has(name) && !unrelated.has(name))).toEqual([]);
  });

  it('CONTROLGRAPH_READ_CACHE_BYTES=0 turns it off', async () => {
    const off = await createTestApp({ config: { readCacheBytes: 0 } });
    try {
      const own = await buildTenant(off);
      const token = own.users['security-analyst'].token;
      for (let i = 0; i < 2; i++) {
        const res = await call(off.app, token, { url: `/api/v1/tenants/${own.id}/findings?per_page=1`, expect: 200 });
        expect(res.headers['x-read-cache']).toBeUndefined();
      }
    } finally {
      await off.close();
    }
  });
});

/**
 * Table statistics once every backend has reported its reads: PGlite's one backend on request;
 * PostgreSQL's pooled backends report when idle, at most every 10 s.
 */
async function settledStats(read: () => Promise<Map<string, number>>): Promise<Map<string, number>> {
  const db = t.deps.database.db;
  if (t.db.kind === 'pglite') {
    await sql`SELECT pg_stat_force_next_flush()`.execute(db);
    await sql`SELECT pg_stat_clear_snapshot()`.execute(db);
    return read();
  }
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  await sql`SELECT pg_stat_clear_snapshot()`.execute(db);
  return read();
}
