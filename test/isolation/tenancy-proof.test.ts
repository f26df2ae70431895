import type { RouteOptions } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { prng, validValue, type Schema } from '../fuzz/generator.js';
import { seedWorkspace } from './seed.js';

/**
 * Tenancy proof, generated from the route table: with data in two tenants and two workspaces, every
 * route is called with tenant A's credentials (workspace A1) naming the victims' ids (tenant B's, and
 * those of A's other workspace A2) in the path, the query and the body. No response may carry a
 * victim's id or marker that A did not send itself, and no victim row may change. New routes are
 * covered as soon as they are registered.
 */
const MARK_B = 'LEAKB';
const MARK_A2 = 'LEAKA2';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const MARKER_TOKEN = new RegExp(`(${MARK_B}|${MARK_A2})[A-Za-z0-9-]*`, 'g');
// Routes that never finish under inject (a live stream) or are not tenant data (sign-in flows).
const SKIP = (route: RouteOptions) =>
  /\/findings\/stream$/.test(route.url) || Boolean((route.config as { public?: boolean } | undefined)?.public);
// Calling these on the attacker's own tenant ends the attacker's session or tenant, not the proof.
const OWN_TENANT_SKIP = new Set(['DELETE /api/v1/tenants/:tenantID']);
const CANDIDATES_PER_TABLE = 3;
// Tenant-level objects that live in a workspace but are administered across the tenant: A's admin
// managing A2's API keys is allowed, so only tenant B's rows of these are victims.
const TENANT_LEVEL = new Set(['api_keys']);
// Tables whose public id is not their id column.
const PUBLIC_ID: Record<string, string> = { poam_items: "'POAM-' || number" };

let t: TestApp;
let a: TenantFixture;
let b: TenantFixture;
let key: string;
let a2: string;
let victimUuids: Set<string>;
let idsByTable: Map<string, string[]>;
let tables: Table[];

interface Table {
  name: string;
  tenant: boolean;
  tenants: boolean;
  workspace: boolean;
  id: boolean;
}

beforeAll(async () => {
  t = await createTestApp({ env: { CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' } });
  a = await buildTenant(t);
  b = await buildTenant(t);
  await seedWorkspace(t, b.admin.token, b.id, MARK_B);
  // A's second workspace: created and filled by A's admin after switching to it.
  const ws = (await call(t.app, a.admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'second' }, expect: 201 })).json();
  a2 = ws.id;
  const inA2 = (await call(t.app, a.admin.token, { method: 'POST', url: '/api/v1/auth/switch-workspace', payload: { workspace_id: a2 }, expect: 200 })).json();
  await seedWorkspace(t, inA2.token, a.id, MARK_A2);
  // A's own data in its default workspace, so A's lists are not trivially empty.
  await seedWorkspace(t, a.admin.token, a.id, 'OWNA1');
  key = (await createApiKey(t, a, { permissions: ['admin:*'], workspace_id: a.defaultWorkspaceId })).key;

  const columns = await sql<{ table_name: string; column_name: string }>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = 'public' AND column_name IN ('tenant_id', 'tenant_ids', 'workspace_id', 'id')`.execute(t.deps.database.db);
  const byTable = new Map<string, Set<string>>();
  for (const row of columns.rows) byTable.set(row.table_name, (byTable.get(row.table_name) ?? new Set()).add(row.column_name));
  tables = [...byTable.entries()]
    .filter(([, cols]) => cols.has('tenant_id') || cols.has('tenant_ids') || cols.has('workspace_id'))
    .map(([name, cols]) => ({
      name,
      tenant: cols.has('tenant_id'),
      tenants: cols.has('tenant_ids'),
      workspace: cols.has('workspace_id') && !TENANT_LEVEL.has(name),
      id: cols.has('id') || name in PUBLIC_ID,
    }))
    .sort((x, y) => x.name.localeCompare(y.name));
  idsByTable = new Map();
  victimUuids = new Set([b.id, b.defaultWorkspaceId]);
  for (const table of tables) {
    if (!table.id) continue;
    const idExpr = sql.raw(PUBLIC_ID[table.name] ?? 'id::text');
    const rows = await sql<{ id: string }>`SELECT ${idExpr} AS id FROM ${sql.table(table.name)} WHERE ${victimWhere(table)} ORDER BY 1`.execute(
      t.deps.database.db,
    );
    const ids = rows.rows.map((r) => r.id);
    if (ids.length) idsByTable.set(table.name, ids);
    for (const id of ids) if (id.match(UUID) && table.name !== 'workspaces') victimUuids.add(id);
  }
  // B's users are B's; A2's workspace row itself is A's tenant metadata (listed by /workspaces).
  for (const user of Object.values(b.users)) victimUuids.add(user.user_id);
}, 600_000);
afterAll(() => t?.close());

function victimWhere(table: Table) {
  const parts = [];
  if (table.tenant) parts.push(sql`tenant_id::text = ${b.id}`);
  if (table.tenants) parts.push(sql`${b.id}::uuid = ANY(tenant_ids)`);
  if (table.workspace) parts.push(sql`workspace_id::text = ${a2}`);
  return sql.join(parts, sql` OR `);
}

/** A fingerprint of every victim row, per table. */
async function snapshot(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const table of tables) {
    const row = await sql<{ n: number; h: string }>`
      SELECT count(*)::int AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h
      FROM ${sql.table(table.name)} x WHERE ${victimWhere(table)}`.execute(t.deps.database.db);
    out.set(table.name, `${row.rows[0]!.n}:${row.rows[0]!.h}`);
  }
  return out;
}

/** Victim ids to try for a parameter: ids of tables named like it first, a few of every table otherwise. */
function candidatesFor(param: string): string[] {
  const stem = param.replace(/(ID|Id|_id|_ids|Ids|IDs)$/, '').toLowerCase();
  const named = [...idsByTable.entries()].filter(([table]) => stem.length > 2 && table.replace(/_/g, '').includes(stem.replace(/_/g, '')));
  const pool = named.length ? named : [...idsByTable.entries()];
  return [...new Set(pool.flatMap(([, ids]) => ids.slice(0, CANDIDATES_PER_TABLE)))];
}

const ID_FIELD = /(^id$|_id$|_ids$|Id$|ID$)/;

interface Attempt {
  method: string;
  url: string;
  payload?: unknown;
}

function pathParams(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
}

/** Requests naming victims' ids: each parameter in turn takes each candidate, the others their first. */
function attempts(route: RouteOptions, method: string, tenantId: string): Attempt[] {
  const schema = (route.schema ?? {}) as { body?: Schema; querystring?: Schema };
  const params = pathParams(route.url).filter((p) => p !== 'tenantID');
  const queryIds = Object.keys(schema.querystring?.properties ?? {}).filter((k) => ID_FIELD.test(k));
  const bodyIds = Object.keys(schema.body?.properties ?? {}).filter((k) => ID_FIELD.test(k));
  const slots = [...params.map((p) => ({ where: 'path', name: p })), ...queryIds.map((q) => ({ where: 'query', name: q })), ...bodyIds.map((k) => ({ where: 'body', name: k }))];
  const first = new Map(slots.map((s) => [s.name, candidatesFor(s.name)[0] ?? 'none']));
  const variations: Array<Map<string, string>> = [first];
  for (const slot of slots) for (const candidate of candidatesFor(slot.name).slice(1)) variations.push(new Map(first).set(slot.name, candidate));
  const rng = prng(7);
  const baseBody = schema.body ? (validValue(schema.body, rng) as Record<string, unknown>) : undefined;
  return variations.map((values) => {
    let url = route.url.replace(':tenantID', tenantId);
    for (const p of params) url = url.replace(`:${p}`, encodeURIComponent(values.get(p)!));
    const query = queryIds.map((q) => `${q}=${encodeURIComponent(values.get(q)!)}`).join('&');
    let payload: unknown;
    if (['POST', 'PUT', 'PATCH'].includes(method)) {
      const body: Record<string, unknown> = baseBody && typeof baseBody === 'object' && !Array.isArray(baseBody) ? { ...baseBody } : {};
      for (const k of bodyIds) body[k] = /_ids$|Ids$|IDs$/.test(k) ? [values.get(k)] : values.get(k);
      payload = body;
    }
    return { method, url: query ? `${url}?${query}` : url, payload };
  });
}

function routesUnderTest(): Array<{ route: RouteOptions; method: string }> {
  const out: Array<{ route: RouteOptions; method: string }> = [];
  for (const route of t.app.routeTable) {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD' || method === 'OPTIONS' || !route.url.startsWith('/api/v1') || SKIP(route)) continue;
      out.push({ route, method });
    }
  }
  return out;
}

describe('tenancy proof over the route table', () => {
  it('the victims hold data of every kind (the proof is not vacuous)', () => {
    for (const table of ['nodes', 'edges', 'findings', 'risk_acceptances', 'poam_items', 'questionnaires', 'applications', 'business_services', 'asset_groups', 'integrations', 'api_keys']) {
      expect(idsByTable.get(table)?.length ?? 0, table).toBeGreaterThan(0);
    }
    expect(routesUnderTest().length).toBeGreaterThan(100);
  });

  it("tenant A's credentials naming B's or A2's ids never read or change their data", async () => {
    const before = await snapshot();
    const sent: string[] = [];
    const failures: string[] = [];
    let requests = 0;
    for (const { route, method } of routesUnderTest()) {
      const variants = [
        ...(OWN_TENANT_SKIP.has(`${method} ${route.url}`) ? [] : attempts(route, method, a.id)),
        // Naming tenant B in the path must be refused before anything else.
        ...(route.url.includes(':tenantID') ? attempts(route, method, b.id).slice(0, 1).map((x) => ({ ...x, otherTenant: true })) : []),
      ];
      for (const attempt of variants) {
        const text = `${attempt.url} ${JSON.stringify(attempt.payload ?? '')}`;
        sent.push(text);
        const res = await t.app.inject({
          method: attempt.method as 'GET',
          url: attempt.url,
          headers: { authorization: `Bearer ${key}` },
          ...(attempt.payload !== undefined ? { payload: attempt.payload as object } : {}),
        });
        requests++;
        const where = `${attempt.method} ${attempt.url} ${attempt.payload ? JSON.stringify(attempt.payload).slice(0, 200) : ''}`;
        if (res.statusCode >= 500) failures.push(`${where} → ${res.statusCode} ${res.body.slice(0, 200)}`);
        if ('otherTenant' in attempt && res.statusCode < 400) failures.push(`${where} → ${res.statusCode} on another tenant's path`);
        const everSent = sent.join('\n');
        const leakedIds = [...new Set(res.body.match(UUID) ?? [])].filter((id) => victimUuids.has(id.toLowerCase()) && !everSent.includes(id));
        const leakedMarks = [...new Set(res.body.match(MARKER_TOKEN) ?? [])].filter((m) => !everSent.includes(m));
        if (leakedIds.length || leakedMarks.length) failures.push(`${where} → ${res.statusCode} leaks ${[...leakedIds, ...leakedMarks].join(', ')}`);
      }
      if (method !== 'GET') {
        const after = await snapshot();
        const changed = [...after.entries()].filter(([table, print]) => before.get(table) !== print).map(([table]) => table);
        if (changed.length) {
          failures.push(`${method} ${route.url} changed victim rows in ${changed.join(', ')}`);
          for (const table of changed) before.set(table, after.get(table)!);
        }
      }
      if (failures.length > 30) break;
    }
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(300);
  }, 900_000);
});
