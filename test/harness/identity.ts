import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Role } from '../../src/platform/rbac/roles.js';
import { ADMIN_PASSWORD, ADMIN_USERNAME, type TestApp } from './app.js';

export interface Session {
  token: string;
  refresh_token: string;
  user_id: string;
  username: string;
  tenant_id: string;
  workspace_id: string;
  role: Role;
}

export interface TenantFixture {
  id: string;
  slug: string;
  defaultWorkspaceId: string;
  admin: Session;
  /** A session per role (read-only … tenant-admin) in this tenant. */
  users: Record<Exclude<Role, 'system-admin'>, Session>;
}

export const PASSWORD = 'correct-horse-battery-staple';
let counter = 0;
export const unique = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** app.inject with a bearer token, throwing with the body when the status is not the expected one. */
export async function call(app: FastifyInstance, token: string | null, options: InjectOptions & { expect?: number }) {
  const { expect: expected, ...rest } = options;
  const res = await app.inject({ ...rest, headers: { ...(token ? bearer(token) : {}), ...(rest.headers ?? {}) } });
  if (expected !== undefined && res.statusCode !== expected) {
    throw new Error(`${rest.method ?? 'GET'} ${rest.url}: expected ${expected}, got ${res.statusCode}: ${res.body}`);
  }
  return res;
}

export async function login(app: FastifyInstance, username: string, password: string): Promise<Session> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { username, password } });
  if (res.statusCode !== 200) throw new Error(`login ${username}: ${res.statusCode} ${res.body}`);
  return res.json();
}

export function loginAdmin(t: TestApp): Promise<Session> {
  return login(t.app, ADMIN_USERNAME, ADMIN_PASSWORD);
}

/** Adds a user with a role to the tenant (as its admin) and logs the user in there. */
export async function addUser(t: TestApp, tenant: { id: string; admin: Session }, role: Role, username = unique(role)): Promise<Session> {
  await call(t.app, tenant.admin.token, {
    method: 'POST',
    url: `/api/v1/tenants/${tenant.id}/users`,
    payload: { username, password: PASSWORD, role },
    expect: 201,
  });
  const session = await login(t.app, username, PASSWORD);
  if (session.tenant_id === tenant.id) return session;
  return selectTenant(t.app, session, tenant.id);
}

export async function selectTenant(app: FastifyInstance, session: Session, tenantId: string): Promise<Session> {
  const res = await call(app, session.token, { method: 'POST', url: '/api/v1/auth/select-tenant', payload: { tenant_id: tenantId }, expect: 200 });
  return res.json();
}

/**
 * A new tenant (created by the bootstrap admin) with a tenant-admin and one user of each lower role,
 * each logged in to it.
 */
export async function buildTenant(t: TestApp, options: { plan?: 'free' | 'pro' | 'enterprise'; name?: string } = {}): Promise<TenantFixture> {
  const system = await loginAdmin(t);
  const name = options.name ?? unique('tenant');
  const created = await call(t.app, system.token, {
    method: 'POST',
    url: '/api/v1/account/tenants',
    payload: { name, ...(options.plan ? { plan: options.plan } : {}) },
    expect: 201,
  });
  const tenant = created.json() as { id: string; slug: string; default_workspace_id: string };
  const asSystem = { id: tenant.id, admin: await selectTenant(t.app, system, tenant.id) };
  const adminSession = await addUser(t, asSystem, 'tenant-admin');
  const withAdmin = { id: tenant.id, admin: adminSession };
  const users = {
    'read-only': await addUser(t, withAdmin, 'read-only'),
    auditor: await addUser(t, withAdmin, 'auditor'),
    'security-analyst': await addUser(t, withAdmin, 'security-analyst'),
    'tenant-admin': adminSession,
  };
  return { id: tenant.id, slug: tenant.slug, defaultWorkspaceId: tenant.default_workspace_id, admin: adminSession, users };
}

/** Creates an API key in the tenant (as its admin) and returns the key value and record. */
export async function createApiKey(
  t: TestApp,
  tenant: TenantFixture,
  body: { permissions: string[]; allowed_ips?: string[]; expires_at?: string; name?: string; workspace_id?: string },
): Promise<{ key: string; id: string }> {
  const res = await call(t.app, tenant.admin.token, {
    method: 'POST',
    url: `/api/v1/tenants/${tenant.id}/api-keys`,
    payload: { name: body.name ?? unique('key'), ...body },
    expect: 201,
  });
  return res.json();
}

/** A new session for the same user in the same tenant (fixtures' tokens expire when tests move the clock). */
export async function fresh(t: TestApp, session: Session): Promise<Session> {
  const next = await login(t.app, session.username, session.username === ADMIN_USERNAME ? ADMIN_PASSWORD : PASSWORD);
  return next.tenant_id === session.tenant_id ? next : selectTenant(t.app, next, session.tenant_id);
}
