import type { RouteOptions } from 'fastify';
import { generate } from 'otplib';
import { sql, type RawBuilder } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type Session, type TenantFixture } from '../harness/identity.js';
import { prng, validValue, type Schema } from '../fuzz/generator.js';
import { buildReport } from '../agents/helpers.js';
import { multipart, PDF } from '../questionnaires/helpers.js';
import { seedWorkspace } from './seed.js';

/**
 * Tenancy proof, generated from the route table: with data of every kind in two tenants and two
 * workspaces, every route is called with tenant A's credentials (workspace A1: an `admin:*` API key,
 * then a tenant-admin's JWT) naming the victims' ids (tenant B's, and those of A's other workspace A2)
 * in the path, the query and the body. No response may carry a victim's id or marker that A did not
 * send itself, and no victim row may change. New routes are covered as soon as they are registered; a
 * route whose path names a new kind of id fails the "not vacuous" test until the seed creates victims
 * of that kind and PARAM_KINDS maps the parameter to them.
 */
const MARK_B = 'LEAKB';
const MARK_A2 = 'LEAKA2';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
// A marker token is the whole word it starts (`LEAKB-res-0`, `leakb-policy`): a response may echo a
// token A sent, never another one (a bare `LEAKB` is a victim's name, whatever ids A sent).
const MARKER_TOKEN = new RegExp(`(${MARK_B}|${MARK_A2})[A-Za-z0-9-]*`, 'gi');
// Routes that never finish under inject (a live stream) or are not tenant data (sign-in flows).
const SKIP = (route: RouteOptions) => /\/findings\/stream$/.test(route.url) || Boolean((route.config as { public?: boolean } | undefined)?.public);
// Calling these on the attacker's own tenant ends the attacker's session or tenant, not the proof.
const OWN_TENANT_SKIP = new Set(['DELETE /api/v1/tenants/:tenantID']);
// The JWT pass would revoke its own token.
const JWT_SKIP = new Set(['POST /api/v1/auth/logout']);
/** Victim ids tried per parameter: this many of B's and as many of A2's. */
const CANDIDATES_PER_VICTIM = 2;
// Tables of tenant-wide objects that also record a workspace: A's admin managing A2's API keys,
// listing the deliveries of A's (tenant-wide) integrations for A2's events, or ending its own sessions
// (whose refresh tokens remember the workspace they were bound to) is allowed, so only tenant B's rows
// of these are victims.
const TENANT_LEVEL = new Set(['api_keys', 'integration_deliveries', 'refresh_tokens']);

/**
 * The kind of id each path parameter names, keyed by the path up to the parameter (without
 * `/api/v1/` and `tenants/:tenantID/`); null for the shared catalogues, which are no tenant's data. A
 * route reusing a key is covered at once; a new key fails the "not vacuous" test until it is mapped
 * to a kind the seed fills.
 */
const PARAM_KINDS: Record<string, string | null> = {
  'workspaces/:id': 'workspaces',
  'users/:userID': 'users',
  'api-keys/:id': 'api_keys',
  'nodes/:id': 'nodes',
  'edges/:id': 'edges',
  'rules/:ruleID': 'custom_rules',
  'findings/runs/:jobID': 'audit_runs',
  'findings/:findingID': 'findings',
  'findings/groups/:groupID': 'finding_groups',
  'risk-acceptances/:acceptanceID': 'risk_acceptances',
  'exports/:jobID': 'exports',
  'jobs/:jobID': 'discovery_jobs',
  'imports/:importID': 'imports',
  'schedules/:scheduleID': 'schedules',
  'cloud-connections/:connectionID': 'cloud_connections',
  'reports/:reportID': 'reports',
  'integrations/:integrationID': 'integrations',
  'integrations/:integrationID/deliveries/:deliveryID': 'integration_deliveries',
  'alerts/rules/:ruleID': 'alert_rules',
  'questionnaires/:qID': 'questionnaires',
  'questionnaires/:qID/questions/:questionID': 'questions',
  'assessments/:aID': 'assessments',
  'assessments/:aID/links/:linkID': 'assessment_links',
  'attestation-evidence/:eID': 'attestation_evidence',
  'poam/:poamId': 'poam_items',
  'poam/:poamId/evidence/:evidenceID': 'poam_evidence',
  'applications/:app_id': 'applications',
  'services/:svcID': 'business_services',
  'services/:serviceID': 'business_services',
  'services/:svcID/applications/:appID': 'applications',
  'asset-groups/:id': 'asset_groups',
  'agents/:agentID': 'agents',
  // Invitations: the tenant's (its admins withdraw them) and the signed-in user's own (accept, decline).
  'invitations/:invitationID': 'invitations',
  'account/invitations/:invitationID': 'invitations',
  // A tenant's queue jobs named as vulnerability-database sync jobs (platform:admin only).
  'vulndb/sync/:jobId': 'queue_jobs',
  'questionnaires/templates/:templateID': null,
  'vulndb/cve/:cveId': null,
  'vulndb/check/:cveId': null,
  // Import runs of the global vulnerability store (platform:admin only): no tenant's data.
  'vulndb/imports/:importId': null,
};

/** The kind of id a query or body field names (ID-like names not listed take a few ids of every kind). */
const FIELD_KINDS: Record<string, string | null> = {
  tenant_id: 'tenants',
  tenants: 'tenants',
  workspace_id: 'workspaces',
  finding_id: 'findings',
  resource_id: 'nodes',
  rule_id: 'custom_rules',
  group_id: 'finding_groups',
  questionnaire_id: 'questionnaires',
  assessment_id: 'assessments',
  question_id: 'questions',
  question_ids: 'questions',
  assignee_id: 'users',
  reviewer_id: 'users',
  actor_id: 'users',
  assignees: 'users',
  asset_group_id: 'asset_groups',
  connection_id: 'cloud_connections',
  application_ids: 'applications',
  // Not ids of tenant data: the shared catalogues, a cloud account number, an identity provider's client.
  template_id: null,
  control_id: null,
  control_ids: null,
  account_id: null,
  // A cloud access key's id (a credential, not a record).
  access_key_id: null,
  client_id: null,
};
/** Fields of one route (method and path as in PARAM_KINDS) whose names alone do not say their kind. */
const ROUTE_FIELD_KINDS: Record<string, Record<string, string>> = {
  'GET findings': { id: 'findings' },
  'POST rules': { id: 'custom_rules' },
  'POST questionnaires/:qID/questions': { id: 'questions' },
  'PUT questionnaires/:qID/questions/:questionID': { id: 'questions' },
  'GET edges': { node: 'nodes', source: 'nodes', target: 'nodes' },
  'POST pathtracer/trace': { source: 'nodes', target: 'nodes' },
  'POST pathtracer/blast-radius': { source: 'nodes' },
};

/**
 * Bodies the schema generator cannot make (a $ref), or makes invalid in a way refused before the ids
 * are looked up (so the request would prove nothing); the victim ids are filled in as for any body.
 */
const acceptance = () => ({ reason: 'proof', owner: 'proof', expires_at: '2027-01-01T00:00:00.000Z' });
const apiKey = () => ({ name: 'proof', permissions: ['nodes:read'] });
const rule = () => ({
  title: 'proof',
  description: 'proof',
  severity: 'LOW',
  resource_type: 'aws.s3.bucket',
  framework: 'soc2',
  control_id: 'CC6.1',
  condition: "resource.name == 'proof'",
  remediation: { summary: 'proof', steps: [{ action: 'proof', command: 'true' }] },
});
const BODIES: Record<string, (values: Map<string, string>, victims: (kind: string) => string[]) => unknown> = {
  'POST agents/:agentID/report': (values) => buildReport({ agent_id: values.get('agentID')! }),
  'PUT users/:userID/role': () => ({ role: 'read-only' }),
  'POST findings/:findingID/accept': acceptance,
  'POST findings/groups/:groupID/accept': acceptance,
  'POST rules': rule,
  'PUT rules/:ruleID': rule,
  'POST api-keys': apiKey,
  'POST questionnaires/from-template': () => ({ template_id: 'cmmc-l2-at' }),
  'POST assessments/:aID/links': () => ({ name: 'proof' }),
  'PATCH cloud-connections/:connectionID': () => ({ name: 'proof' }),
  // Ids nested in the body: an edge between two victims' nodes.
  'POST edges': (_values, victims) => ({ edges: [{ source: victims('nodes')[0], target: victims('nodes').at(-1), type: 'contains' }] }),
};

/** Ids of each kind: every row with its tenant and workspace (null for tenant-wide kinds). */
const generic = (table: string, id = 'id::text') => `SELECT ${id} AS id, tenant_id::text AS tenant, workspace_id::text AS workspace FROM ${table}`;
const tenantWide = (table: string, where = '') => `SELECT id::text AS id, tenant_id::text AS tenant, NULL AS workspace FROM ${table} ${where}`;
const KINDS: Record<string, string> = {
  tenants: 'SELECT id::text AS id, id::text AS tenant, NULL AS workspace FROM tenants',
  workspaces: tenantWide('workspaces'),
  // Members of one tenant only (the bootstrap admin created both tenants and is a member of both).
  users: 'SELECT user_id::text AS id, min(tenant_id::text) AS tenant, NULL AS workspace FROM memberships GROUP BY user_id HAVING count(*) = 1',
  api_keys: tenantWide('api_keys'),
  custom_rules: tenantWide('custom_rules'),
  integrations: tenantWide('integrations'),
  alert_rules: tenantWide('integrations', "WHERE source = 'alert_rule'"),
  integration_deliveries: tenantWide('integration_deliveries'),
  nodes: generic('nodes'),
  edges: generic('edges'),
  imports: generic('imports'),
  findings: generic('findings'),
  finding_groups: 'SELECT DISTINCT group_id AS id, tenant_id::text AS tenant, workspace_id::text AS workspace FROM findings WHERE group_id IS NOT NULL',
  audit_runs: generic('audit_runs'),
  risk_acceptances: generic('risk_acceptances'),
  exports: generic('exports'),
  discovery_jobs: generic('discovery_jobs'),
  schedules: generic('schedules'),
  cloud_connections: generic('cloud_connections'),
  reports: generic('reports'),
  queue_jobs: generic('jobs'),
  questionnaires: generic('questionnaires'),
  // Questions of custom questionnaires (a template's question ids are the same in every tenant).
  questions:
    "SELECT q->>'id' AS id, tenant_id::text AS tenant, workspace_id::text AS workspace FROM questionnaires, jsonb_array_elements(questions) AS q WHERE template_id IS NULL",
  assessments: generic('assessments'),
  attestation_evidence: generic('attestation_evidence'),
  assessment_links: generic('assessment_links'),
  poam_items: generic('poam_items', "'POAM-' || number"),
  poam_evidence:
    'SELECT e.id::text AS id, e.tenant_id::text AS tenant, p.workspace_id::text AS workspace FROM poam_evidence e JOIN poam_items p ON p.tenant_id = e.tenant_id AND p.number = e.number',
  applications: generic('applications'),
  business_services: generic('business_services'),
  asset_groups: generic('asset_groups'),
  agents: generic('agents', 'agent_id'),
  invitations: tenantWide('membership_invitations'),
};

/** Tables the seed must fill for the victims (the snapshot watches every table that holds tenant data). */
const SEEDED_TABLES = [
  'nodes',
  'edges',
  'findings',
  'audit_runs',
  'risk_acceptances',
  'risk_acceptance_findings',
  'poam_items',
  'poam_comments',
  'poam_evidence',
  'questionnaires',
  'questionnaire_controls',
  'assessments',
  'assessment_responses',
  'assessment_reviews',
  'assessment_poam_items',
  'attestation_evidence',
  'assessment_links',
  'control_attestations',
  'applications',
  'business_services',
  'business_service_applications',
  'asset_groups',
  'integrations',
  'integration_deliveries',
  'integration_delivery_attempts',
  'custom_rules',
  'sso_configs',
  'api_keys',
  'exports',
  'reports',
  'discovery_jobs',
  'imports',
  'schedules',
  'cloud_connections',
  'agents',
  'agent_hosts',
  'agent_reports',
  'agent_host_packages',
  'outbox_events',
  'audit_logs',
  'membership_invitations',
  'user_totp',
  'user_recovery_codes',
];

let t: TestApp;
let a: TenantFixture;
let b: TenantFixture;
let key: string;
let a2: string;
/** The token of an outside-respondent link to an assessment of A's default workspace. */
let linkToken: string;
let victimUuids: Set<string>;
let tables: Table[];
/** Per kind: the victims' ids (B's, then A2's) and A's own ids in workspace A1. */
let kinds: Map<string, { b: string[]; a2: string[]; own: string[] }>;

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
  await seedWorkspace(t, { tenantId: b.id, admin: b.admin, analyst: b.users['security-analyst'], marker: MARK_B, tenantMarker: MARK_B });
  // A victim with a second factor (authenticator and recovery codes), which A's admin must not reset.
  const victim = b.users['read-only'];
  const { secret } = (await call(t.app, victim.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll', expect: 200 })).json();
  const code = await generate({ secret, epoch: Math.floor(t.clock.now().getTime() / 1000) });
  await call(t.app, victim.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/confirm', payload: { code }, expect: 200 });
  // A's second workspace: created by A's admin, filled by A's admin and analyst after switching to it.
  const ws = (await call(t.app, a.admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'second' }, expect: 201 })).json();
  a2 = ws.id;
  const switchTo = async (session: Session): Promise<Session> =>
    (await call(t.app, session.token, { method: 'POST', url: '/api/v1/auth/switch-workspace', payload: { workspace_id: a2 }, expect: 200 })).json();
  await seedWorkspace(t, { tenantId: a.id, admin: await switchTo(a.admin), analyst: await switchTo(a.users['security-analyst']), marker: MARK_A2, tenantMarker: null });
  // A's own data in its default workspace, so A's lists are not trivially empty (and A's own ids exist).
  ({ linkToken } = await seedWorkspace(t, { tenantId: a.id, admin: a.admin, analyst: a.users['security-analyst'], marker: 'OWNA1', tenantMarker: 'OWNA1' }));
  key = (await createApiKey(t, a, { permissions: ['admin:*'], workspace_id: a.defaultWorkspaceId })).key;

  const columns = await sql<{ table_name: string; column_name: string }>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = 'public' AND column_name IN ('tenant_id', 'tenant_ids', 'workspace_id', 'id')`.execute(t.deps.database.db);
  const byTable = new Map<string, Set<string>>();
  for (const row of columns.rows) byTable.set(row.table_name, (byTable.get(row.table_name) ?? new Set()).add(row.column_name));
  for (const name of Object.keys(CHILD_VICTIMS)) if (!byTable.has(name)) byTable.set(name, new Set());
  tables = [...byTable.entries()]
    .filter(([name, cols]) => cols.has('tenant_id') || cols.has('tenant_ids') || cols.has('workspace_id') || name in CHILD_VICTIMS)
    .map(([name, cols]) => ({ name, tenant: cols.has('tenant_id'), tenants: cols.has('tenant_ids'), workspace: cols.has('workspace_id'), id: cols.has('id') }))
    .sort((x, y) => x.name.localeCompare(y.name));

  // Every UUID of a victim row (B's tenant, workspace and users among them).
  victimUuids = new Set();
  for (const table of tables) {
    if (!table.id) continue;
    const rows = await sql<{ id: string }>`SELECT id::text AS id FROM ${sql.table(table.name)} WHERE ${victimWhere(table)}`.execute(t.deps.database.db);
    for (const { id } of rows.rows) if (id.match(UUID)) victimUuids.add(id.toLowerCase());
  }

  kinds = new Map();
  for (const [kind, query] of Object.entries(KINDS)) {
    const rows = (await sql<{ id: string; tenant: string | null; workspace: string | null }>`${sql.raw(query)}`.execute(t.deps.database.db)).rows;
    const ids = (keep: (r: { tenant: string | null; workspace: string | null }) => boolean) => [...new Set(rows.filter(keep).map((r) => r.id))].sort();
    kinds.set(kind, {
      b: ids((r) => r.tenant === b.id),
      a2: ids((r) => r.tenant === a.id && r.workspace === a2),
      own: ids((r) => r.tenant === a.id && (r.workspace === null || r.workspace === a.defaultWorkspaceId)),
    });
  }
}, 600_000);
afterAll(() => t?.close());

/** Victim rows of tables that have no tenant or workspace column of their own (or not the whole story). */
const CHILD_VICTIMS: Record<string, () => RawBuilder<unknown>> = {
  tenants: () => sql`id::text = ${b.id}`,
  users: () => sql`id IN (${onlyB()})`,
  sessions: () => sql`user_id IN (${onlyB()})`,
  // B's users' second factors (an admin of A resetting them would show here).
  user_totp: () => sql`user_id IN (${onlyB()})`,
  user_recovery_codes: () => sql`user_id IN (${onlyB()})`,
  assessment_responses: () => sql`assessment_id IN (SELECT id FROM assessments WHERE ${victimWhere(table('assessments'))})`,
  assessment_reviews: () => sql`assessment_id IN (SELECT id FROM assessments WHERE ${victimWhere(table('assessments'))})`,
  assessment_poam_items: () => sql`assessment_id IN (SELECT id FROM assessments WHERE ${victimWhere(table('assessments'))})`,
  integration_delivery_attempts: () => sql`delivery_id IN (SELECT id FROM integration_deliveries WHERE tenant_id::text = ${b.id})`,
  // Comments and evidence of A2's POA&M items (tenant A's rows, numbered per tenant).
  poam_comments: () => sql`(tenant_id::text = ${a.id} AND number IN (SELECT number FROM poam_items WHERE workspace_id::text = ${a2}))`,
  poam_evidence: () => sql`(tenant_id::text = ${a.id} AND number IN (SELECT number FROM poam_items WHERE workspace_id::text = ${a2}))`,
};

/** B's users who are not A's too (the bootstrap admin created both tenants and is a member of both). */
const onlyB = () => sql`SELECT user_id FROM memberships WHERE tenant_id::text = ${b.id} EXCEPT SELECT user_id FROM memberships WHERE tenant_id::text = ${a.id}`;

const table = (name: string) => tables.find((x) => x.name === name)!;

function victimWhere(table: Table) {
  const parts = [];
  const workspaces = TENANT_LEVEL.has(table.name) ? [b.defaultWorkspaceId] : [b.defaultWorkspaceId, a2];
  if (table.tenant) parts.push(sql`tenant_id::text = ${b.id}`);
  if (table.tenants) parts.push(sql`${b.id}::uuid = ANY(tenant_ids)`);
  if (table.workspace) parts.push(sql`workspace_id::text IN (${sql.join(workspaces)})`);
  const child = CHILD_VICTIMS[table.name];
  if (child) parts.push(child());
  return sql.join(parts, sql` OR `);
}

/** A fingerprint of every victim row, per table, in one query. */
async function snapshot(): Promise<Map<string, string>> {
  const selects = tables.map(
    (x) => sql`SELECT ${x.name} AS t, count(*)::int AS n, md5(coalesce(string_agg(v::text, '|' ORDER BY v::text), '')) AS h
      FROM ${sql.table(x.name)} v WHERE ${victimWhere(x)}`,
  );
  const rows = await sql<{ t: string; n: number; h: string }>`${sql.join(selects, sql` UNION ALL `)}`.execute(t.deps.database.db);
  return new Map(rows.rows.map((r) => [r.t, `${r.n}:${r.h}`]));
}

/** The path of a route relative to the API and the tenant, as PARAM_KINDS and ROUTE_FIELD_KINDS name routes. */
const shortPath = (url: string) => url.replace(/^\/api\/v1\//, '').replace(/^tenants\/:tenantID\/?/, '');

/** The PARAM_KINDS key of a path parameter: the route's path up to it. */
function paramKey(url: string, param: string): string {
  const path = shortPath(url);
  return path.slice(0, path.indexOf(`:${param}`) + param.length + 1);
}

function victimsOf(kind: string): string[] {
  const ids = kinds.get(kind)!;
  return [...ids.b.slice(0, CANDIDATES_PER_VICTIM), ...ids.a2.slice(0, CANDIDATES_PER_VICTIM)];
}

/** For an ID-like field of no known kind: one victim id of every kind. */
function anyVictims(): string[] {
  return [...new Set([...kinds.values()].flatMap((ids) => [ids.b[0], ids.a2[0]]).filter((id): id is string => id !== undefined))];
}

const ID_FIELD = /(^id$|_id$|_ids$|Id$|ID$)/;

interface Slot {
  where: 'path' | 'query' | 'body';
  name: string;
  candidates: string[];
  /** A's own id of the slot's kind (path parameters), for the variations naming a victim under A's own parent. */
  own?: string;
}

interface Attempt {
  method: string;
  url: string;
  payload?: unknown;
  headers?: Record<string, string>;
  otherTenant?: boolean;
}

function pathParams(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
}

function slotsOf(route: RouteOptions, method: string): Slot[] {
  const schema = (route.schema ?? {}) as { body?: Schema; querystring?: Schema };
  const routeFields = ROUTE_FIELD_KINDS[`${method} ${shortPath(route.url)}`] ?? {};
  const fieldSlot = (where: 'query' | 'body', name: string): Slot | null => {
    const kind = name in routeFields ? routeFields[name] : name in FIELD_KINDS ? FIELD_KINDS[name] : ID_FIELD.test(name) ? undefined : null;
    if (kind === null) return null;
    return { where, name, candidates: kind === undefined ? anyVictims() : victimsOf(kind!) };
  };
  const slots: Slot[] = [];
  for (const p of pathParams(route.url)) {
    if (p === 'tenantID') continue;
    const kind = PARAM_KINDS[paramKey(route.url, p)];
    // Unmapped parameters fail the "not vacuous" test; the shared catalogues keep their generated value.
    if (!kind) continue;
    slots.push({ where: 'path', name: p, candidates: victimsOf(kind), own: kinds.get(kind)!.own[0] });
  }
  for (const q of Object.keys(schema.querystring?.properties ?? {})) {
    const slot = fieldSlot('query', q);
    if (slot) slots.push(slot);
  }
  for (const k of Object.keys(schema.body?.properties ?? {})) {
    const slot = fieldSlot('body', k);
    if (slot) slots.push(slot);
  }
  return slots;
}

/**
 * Requests naming victims' ids: every slot its first victim; then each slot in turn takes each of its
 * other victims; then, for nested paths, each victim child under A's own parent (a child looked up by
 * its id alone would answer there).
 */
function attempts(route: RouteOptions, method: string, tenantId: string): Attempt[] {
  const schema = (route.schema ?? {}) as { body?: Schema; querystring?: Schema; consumes?: string[] };
  const slots = slotsOf(route, method);
  const first = new Map(slots.map((s) => [s.name, s.candidates[0] ?? 'none']));
  const variations: Array<Map<string, string>> = [first];
  for (const slot of slots) for (const candidate of slot.candidates.slice(1)) variations.push(new Map(first).set(slot.name, candidate));
  const pathSlots = slots.filter((s) => s.where === 'path');
  for (const [i, child] of pathSlots.entries()) {
    if (i === 0 || pathSlots.slice(0, i).some((p) => p.own === undefined)) continue;
    for (const candidate of child.candidates) {
      const values = new Map(first).set(child.name, candidate);
      for (const parent of pathSlots.slice(0, i)) values.set(parent.name, parent.own!);
      variations.push(values);
    }
  }
  const key = `${method} ${shortPath(route.url)}`;
  const rng = prng(7);
  const generated = schema.body ? (validValue(schema.body, rng) as Record<string, unknown>) : undefined;
  const multipartBody = schema.consumes?.includes('multipart/form-data') ?? false;
  return variations.map((values) => {
    let url = route.url.replace(':tenantID', tenantId);
    for (const p of pathParams(route.url)) if (values.has(p)) url = url.replace(`:${p}`, encodeURIComponent(values.get(p)!));
    url = url.replace(/:([A-Za-z_]+)/g, 'x');
    const query = slots
      .filter((s) => s.where === 'query')
      .map((s) => `${s.name}=${encodeURIComponent(values.get(s.name)!)}`)
      .join('&');
    const attempt: Attempt = { method, url: query ? `${url}?${query}` : url };
    if (['POST', 'PUT', 'PATCH'].includes(method)) {
      const base = BODIES[key]?.(values, victimsOf) ?? generated;
      const body: Record<string, unknown> = base && typeof base === 'object' && !Array.isArray(base) ? { ...base } : {};
      for (const slot of slots.filter((s) => s.where === 'body')) {
        body[slot.name] = /_ids$|Ids$|IDs$|^tenants$|^assignees$/.test(slot.name) ? [values.get(slot.name)] : values.get(slot.name);
      }
      if (multipartBody) {
        const fields = Object.fromEntries(Object.entries(body).filter(([k, v]) => k !== 'file' && typeof v === 'string')) as Record<string, string>;
        const form = multipart(fields, { filename: 'evidence.pdf', contentType: 'application/pdf', content: PDF });
        attempt.payload = form.payload;
        attempt.headers = form.headers;
      } else {
        attempt.payload = body;
      }
    }
    return attempt;
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

const sent: string[] = [];
const sentTokens = new Set<string>();
const sentUuids = new Set<string>();

function errorMessage(body: string): string {
  try {
    return String((JSON.parse(body) as { error?: { message?: unknown } }).error?.message ?? '');
  } catch {
    return '';
  }
}

/** Runs every attempt of every route with one credential; returns the failures and the number of requests. */
async function prove(credential: string, skip: Set<string>): Promise<{ failures: string[]; requests: number }> {
  const before = await snapshot();
  const failures: string[] = [];
  let requests = 0;
  for (const { route, method } of routesUnderTest()) {
    if (skip.has(`${method} ${route.url}`)) continue;
    const variants: Attempt[] = [
      ...(OWN_TENANT_SKIP.has(`${method} ${route.url}`) ? [] : attempts(route, method, a.id)),
      // Naming tenant B in the path must be refused before anything else.
      ...(route.url.includes(':tenantID')
        ? attempts(route, method, b.id)
            .slice(0, 1)
            .map((x) => ({ ...x, otherTenant: true }))
        : []),
    ];
    // Requests refused by schema validation never look an id up: a route whose every attempt is refused
    // that way proves nothing (give it a body in BODIES).
    const namesVictims = slotsOf(route, method).some((slot) => slot.where === 'path');
    let lookedUp = 0;
    for (const attempt of variants) {
      const text = `${attempt.url} ${Buffer.isBuffer(attempt.payload) ? attempt.payload.toString('latin1') : JSON.stringify(attempt.payload ?? '')}`;
      sent.push(text);
      for (const token of text.match(MARKER_TOKEN) ?? []) sentTokens.add(token.toLowerCase());
      for (const id of text.match(UUID) ?? []) sentUuids.add(id.toLowerCase());
      const res = await t.app.inject({
        method: attempt.method as 'GET',
        url: attempt.url,
        headers: { authorization: `Bearer ${credential}`, ...attempt.headers },
        ...(attempt.payload !== undefined ? { payload: attempt.payload as object } : {}),
      });
      requests++;
      const shown = Buffer.isBuffer(attempt.payload) ? '(multipart)' : attempt.payload ? JSON.stringify(attempt.payload).slice(0, 200) : '';
      const where = `${attempt.method} ${attempt.url} ${shown}`;
      if (!attempt.otherTenant && !(res.statusCode === 400 && /^invalid (body|params|querystring|headers):/.test(errorMessage(res.body)))) lookedUp++;
      if (res.statusCode >= 500) failures.push(`${where} → ${res.statusCode} ${res.body.slice(0, 200)}`);
      if (attempt.otherTenant && res.statusCode < 400) failures.push(`${where} → ${res.statusCode} on another tenant's path`);
      const leakedIds = [...new Set((res.body.match(UUID) ?? []).map((id) => id.toLowerCase()))].filter((id) => victimUuids.has(id) && !sentUuids.has(id));
      const leakedMarks = [...new Set(res.body.match(MARKER_TOKEN) ?? [])].filter((m) => !sentTokens.has(m.toLowerCase()));
      if (leakedIds.length || leakedMarks.length) failures.push(`${where} → ${res.statusCode} leaks ${[...leakedIds, ...leakedMarks].join(', ')}`);
    }
    if (namesVictims && variants.some((x) => !x.otherTenant) && lookedUp === 0) {
      failures.push(`${method} ${route.url}: every attempt was refused by request validation, before any id was looked up`);
    }
    if (method !== 'GET') {
      const after = await snapshot();
      const changed = [...after.entries()].filter(([name, print]) => before.get(name) !== print).map(([name]) => name);
      if (changed.length) {
        failures.push(`${method} ${route.url} changed victim rows in ${changed.join(', ')}`);
        for (const name of changed) before.set(name, after.get(name)!);
      }
    }
    if (failures.length > 30) break;
  }
  return { failures, requests };
}

describe('tenancy proof over the route table', () => {
  it('the victims hold data of every kind a route names (the proof is not vacuous)', async () => {
    const counts = await snapshot();
    for (const name of SEEDED_TABLES) expect(Number(counts.get(name)?.split(':')[0] ?? 0), `victim rows in ${name}`).toBeGreaterThan(0);
    const unmapped: string[] = [];
    for (const { route } of routesUnderTest()) {
      for (const p of pathParams(route.url)) {
        if (p === 'tenantID') continue;
        const key = paramKey(route.url, p);
        if (!(key in PARAM_KINDS)) unmapped.push(`${route.url} :${p} (add "${key}" to PARAM_KINDS and victims of its kind to the seed)`);
      }
    }
    expect(unmapped).toEqual([]);
    for (const kind of new Set(Object.values(PARAM_KINDS))) {
      if (kind === null) continue;
      const ids = kinds.get(kind);
      expect(ids, `kind ${kind}`).toBeDefined();
      expect(ids!.b.length, `tenant B's ${kind}`).toBeGreaterThan(0);
      // A kind with a workspace has victims in A's other workspace too.
      const tenantWide = /NULL AS workspace/.test(KINDS[kind]!);
      if (!tenantWide) expect(ids!.a2.length, `workspace A2's ${kind}`).toBeGreaterThan(0);
    }
    expect(routesUnderTest().length).toBeGreaterThan(100);
  });

  it("tenant A's admin:* API key naming B's or A2's ids never reads or changes their data", async () => {
    const { failures, requests } = await prove(key, new Set());
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(300);
  }, 900_000);

  it("tenant A's outside-respondent link naming B's or A2's ids reaches only its own assessment", async () => {
    // The respondent routes are public (the link's token is their credential), so the route-table pass
    // above skips them; here A's live link tries every one of them with the victims' ids.
    const before = await snapshot();
    const questions = victimsOf('questions');
    const assessments = victimsOf('assessments');
    const evidence = victimsOf('attestation_evidence');
    const form = (fields: Record<string, string>) => multipart(fields, { filename: 'evidence.pdf', contentType: 'application/pdf', content: PDF });
    const tries: Attempt[] = [
      { method: 'GET', url: '/api/v1/respond/assessment' },
      { method: 'GET', url: '/api/v1/respond/evidence' },
      ...questions.map((q) => ({ method: 'GET', url: `/api/v1/respond/evidence?question_id=${encodeURIComponent(q)}` })),
      { method: 'POST', url: '/api/v1/respond/assessment/responses', payload: { responses: questions.map((q) => ({ question_id: q, answer: 'yes' })) } },
      // A's own file question answered with the victims' evidence ids.
      { method: 'POST', url: '/api/v1/respond/assessment/responses', payload: { responses: [{ question_id: 'owna1-evidence', answer: evidence.join(',') }] } },
      ...assessments.flatMap((assessment) =>
        [...questions, 'owna1-evidence'].map((question) => {
          const body = form({ assessment_id: assessment, question_id: question });
          return { method: 'POST', url: '/api/v1/respond/evidence', payload: body.payload, headers: body.headers };
        }),
      ),
      { method: 'POST', url: '/api/v1/respond/assessment/submit' },
    ];
    const failures: string[] = [];
    const covered = new Set<string>();
    for (const attempt of tries) {
      covered.add(`${attempt.method} ${attempt.url.split('?')[0]}`);
      const text = `${attempt.url} ${Buffer.isBuffer(attempt.payload) ? attempt.payload.toString('latin1') : JSON.stringify(attempt.payload ?? '')}`;
      const sentIds = new Set((text.match(UUID) ?? []).map((id) => id.toLowerCase()));
      const sentMarks = new Set((text.match(MARKER_TOKEN) ?? []).map((m) => m.toLowerCase()));
      const res = await t.app.inject({
        method: attempt.method as 'GET',
        url: attempt.url,
        headers: { authorization: `Bearer ${linkToken}`, ...attempt.headers },
        ...(attempt.payload !== undefined ? { payload: attempt.payload as object } : {}),
      });
      const where = `${attempt.method} ${attempt.url}`;
      if (res.statusCode >= 500 || res.statusCode === 401) failures.push(`${where} → ${res.statusCode} ${res.body.slice(0, 200)}`);
      const leakedIds = [...new Set((res.body.match(UUID) ?? []).map((id) => id.toLowerCase()))].filter((id) => victimUuids.has(id) && !sentIds.has(id));
      const leakedMarks = [...new Set(res.body.match(MARKER_TOKEN) ?? [])].filter((m) => !sentMarks.has(m.toLowerCase()));
      if (leakedIds.length || leakedMarks.length) failures.push(`${where} → ${res.statusCode} leaks ${[...leakedIds, ...leakedMarks].join(', ')}`);
    }
    const after = await snapshot();
    const changed = [...after.entries()].filter(([name, print]) => before.get(name) !== print).map(([name]) => name);
    expect(failures).toEqual([]);
    expect(changed).toEqual([]);
    // Every respondent route was tried (a new one fails here until it is added above).
    const routes = t.app.routeTable
      .filter((route) => route.url.startsWith('/api/v1/respond/'))
      .flatMap((route) =>
        [route.method]
          .flat()
          .filter((m) => m !== 'HEAD')
          .map((m) => `${m} ${route.url}`),
      );
    expect([...covered].sort()).toEqual([...new Set(routes)].sort());
  });

  it("tenant A's tenant-admin JWT naming B's or A2's ids never reads or changes their data", async () => {
    const { failures, requests } = await prove(a.admin.token, JWT_SKIP);
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(300);
  }, 900_000);
});
