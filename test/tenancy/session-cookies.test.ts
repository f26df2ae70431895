import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from '../harness/app.js';
import { awsNode } from '../harness/graph.js';
import { bearer, buildTenant, call, fresh, loginAdmin, PASSWORD, type TenantFixture } from '../harness/identity.js';

/**
 * The web console's cookie session (issue 24): the token endpoints' login, refresh and switches with
 * the tokens in HttpOnly cookies, the cookie as a credential of every route, and the CSRF header
 * that cookie-authenticated unsafe requests must carry.
 */
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
/** A user of `tenant` (security-analyst) who is also read-only in `other`. */
let twoTenants: string;

const CSRF = { 'x-controlgraph-csrf': '1' };
/** The fields of GET /auth/me, which the session endpoints answer (never a token). */
let meKeys: string[];

interface Jar {
  cg_session?: string;
  cg_refresh?: string;
}

type SetCookie = LightMyRequestResponse['cookies'][number];

function cookieNamed(res: LightMyRequestResponse, name: string): SetCookie | undefined {
  return res.cookies.find((c) => c.name === name);
}

/** What a browser keeps from a response: set cookies replace, cleared ones (Max-Age=0) go. */
function keep(jar: Jar, res: LightMyRequestResponse): Jar {
  const next: Jar = { ...jar };
  for (const c of res.cookies) {
    if (c.name !== 'cg_session' && c.name !== 'cg_refresh') continue;
    if (c.maxAge === 0) delete next[c.name];
    else next[c.name] = c.value;
  }
  return next;
}

/** The Cookie header for a request path: cg_refresh only under its Path, as a browser sends it. */
function cookieHeader(jar: Jar, url: string): Record<string, string> {
  const parts: string[] = [];
  if (jar.cg_session) parts.push(`cg_session=${jar.cg_session}`);
  if (jar.cg_refresh && url.startsWith('/api/v1/auth/session')) parts.push(`cg_refresh=${jar.cg_refresh}`);
  return parts.length > 0 ? { cookie: parts.join('; ') } : {};
}

function send(jar: Jar, options: { method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; url: string; payload?: unknown; headers?: Record<string, string> }) {
  return t.app.inject({
    method: options.method ?? 'GET',
    url: options.url,
    ...(options.payload !== undefined ? { payload: options.payload as object } : {}),
    headers: { ...cookieHeader(jar, options.url), ...(options.headers ?? {}) },
  });
}

async function signIn(username: string, password = PASSWORD): Promise<{ jar: Jar; res: LightMyRequestResponse }> {
  const res = await send({}, { method: 'POST', url: '/api/v1/auth/session', payload: { username, password }, headers: CSRF });
  expect(res.statusCode, res.body).toBe(200);
  return { jar: keep({}, res), res };
}

async function auditActions(action: string, tenantId: string) {
  return t.db.handle.db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenantId).where('action', '=', action).execute();
}

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  twoTenants = tenant.users['security-analyst'].username;
  meKeys = Object.keys((await call(t.app, tenant.users.auditor.token, { url: '/api/v1/auth/me', expect: 200 })).json()).sort();
  expect(meKeys).not.toContain('token');
  await call(t.app, (await loginAdmin(t)).token, {
    method: 'POST',
    url: `/api/v1/tenants/${other.id}/users`,
    payload: { username: twoTenants, role: 'read-only' },
    expect: 201,
  });
});
afterAll(() => t.close());

describe('POST /auth/session', () => {
  it('signs in: the Me body without tokens, and both cookies HttpOnly, SameSite=Strict, with their paths and lifetimes', async () => {
    const { res } = await signIn(tenant.users.auditor.username);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(meKeys);
    expect(body).toMatchObject({
      auth_type: 'jwt',
      username: tenant.users.auditor.username,
      tenant_id: tenant.id,
      workspace_id: tenant.defaultWorkspaceId,
      role: 'auditor',
      is_system_admin: false,
      api_key_id: null,
    });
    expect(body.permissions).toContain('logs:read');
    expect(body.expires_at).toBe(new Date(t.clock.now().getTime() + 3600_000).toISOString());
    expect(res.body).not.toMatch(/cgr_|eyJ/);
    expect(res.headers['cache-control']).toBe('no-store');

    const session = cookieNamed(res, 'cg_session')!;
    expect(session).toMatchObject({ path: '/', maxAge: 3600, httpOnly: true, sameSite: 'Strict' });
    expect(session.secure).toBeUndefined();
    expect(session.value.split('.')).toHaveLength(3);
    const refresh = cookieNamed(res, 'cg_refresh')!;
    expect(refresh).toMatchObject({ path: '/api/v1/auth/session', maxAge: 7 * 86400, httpOnly: true, sameSite: 'Strict' });
    expect(refresh.value).toMatch(/^cgr_/);
    // The raw header, as a browser reads it.
    const raw = ([] as string[]).concat(res.headers['set-cookie'] as string | string[]);
    expect(raw.find((c) => c.startsWith('cg_session='))).toMatch(/; Max-Age=3600; Path=\/; HttpOnly; SameSite=Strict$/);
  });

  it('is the same login as /auth/token: 401 with the same message, audit-logged, no cookie', async () => {
    const res = await send(
      {},
      { method: 'POST', url: '/api/v1/auth/session', payload: { username: tenant.users.auditor.username, password: 'wrong-password-123' }, headers: CSRF },
    );
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toEqual({ code: 'UNAUTHORIZED', message: 'invalid username or password', details: null });
    expect(res.cookies).toEqual([]);
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await auditActions('auth.login_failed', tenant.id)).length).toBeGreaterThan(0);
    expect((await auditActions('auth.login', tenant.id)).some((a) => a.actor_name === tenant.users.auditor.username)).toBe(true);
  });

  it('shares the login throttle with /auth/token (429 once a username is locked)', async () => {
    const username = tenant.users['read-only'].username;
    for (let i = 0; i < 5; i++) {
      const res = await send({}, { method: 'POST', url: '/api/v1/auth/token', payload: { username, password: 'not-the-password' } });
      expect(res.statusCode).toBe(401);
    }
    const locked = await send({}, { method: 'POST', url: '/api/v1/auth/session', payload: { username, password: PASSWORD }, headers: CSRF });
    expect(locked.statusCode).toBe(429);
    expect(locked.json().error.code).toBe('RATE_LIMITED');
    expect(locked.cookies).toEqual([]);
    t.clock.advance(15 * 60_000 + 1000);
  });

  it('403 CSRF_REQUIRED without the CSRF header (login CSRF), before the password is looked at', async () => {
    for (const headers of [{}, { 'x-controlgraph-csrf': '0' }] as Array<Record<string, string>>) {
      const res = await send({}, { method: 'POST', url: '/api/v1/auth/session', payload: { username: tenant.users.auditor.username, password: PASSWORD }, headers });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('CSRF_REQUIRED');
      expect(res.json().error.message).toBe('the header "x-controlgraph-csrf: 1" is required for cookie sessions (on POST, PUT, PATCH and DELETE, and on sign-in and refresh)');
      expect(res.cookies).toEqual([]);
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });
});

describe('the session cookie as a credential', () => {
  it('GET /auth/me with only the cookie answers what the sign-in answered', async () => {
    const { jar, res } = await signIn(tenant.users.auditor.username);
    const me = await send({ cg_session: jar.cg_session }, { url: '/api/v1/auth/me' });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual(res.json());
    // Reads need no CSRF header; tenant routes work as with the bearer token.
    expect((await send(jar, { url: `/api/v1/tenants/${tenant.id}/audit-logs` })).statusCode).toBe(200);
  });

  it('unsafe methods with the cookie need the CSRF header: 403 CSRF_REQUIRED without it, done with it', async () => {
    const { jar } = await signIn(tenant.admin.username);
    const refused = await send(jar, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'csrf-refused' } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('CSRF_REQUIRED');
    expect(refused.json().error.message).toMatch(/"x-controlgraph-csrf: 1" is required for cookie sessions/);
    const created = await send(jar, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'csrf-accepted' }, headers: CSRF });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    expect((await send(jar, { method: 'PATCH', url: `/api/v1/workspaces/${id}`, payload: { name: 'renamed' } })).json().error.code).toBe('CSRF_REQUIRED');
    expect((await send(jar, { method: 'DELETE', url: `/api/v1/workspaces/${id}` })).json().error.code).toBe('CSRF_REQUIRED');
    expect((await send(jar, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}`, payload: { name: 'x' } })).json().error.code).toBe('CSRF_REQUIRED');
    expect((await send(jar, { method: 'DELETE', url: `/api/v1/workspaces/${id}`, headers: CSRF })).statusCode).toBe(204);
  });

  it('bearer tokens and API keys need no CSRF header, and the Authorization header wins over the cookie', async () => {
    const admin = await fresh(t, tenant.admin);
    const res = await send({}, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'by-bearer' }, headers: bearer(admin.token) });
    expect(res.statusCode).toBe(201);
    const key = await call(t.app, admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/api-keys`,
      payload: { name: 'csrf-free', permissions: ['nodes:write'] },
      expect: 201,
    });
    const byKey = await send(
      {},
      { method: 'POST', url: `/api/v1/tenants/${tenant.id}/nodes`, payload: { nodes: [awsNode('aws.s3.bucket', 'csrf-free-bucket')] }, headers: bearer(key.json().key) },
    );
    expect(byKey.statusCode, byKey.body).toBe(201);

    // The cookie of one user, the bearer token of another: the request is the bearer's, without CSRF header.
    const { jar } = await signIn(tenant.users.auditor.username);
    const me = await send(jar, { url: '/api/v1/auth/me', headers: bearer(admin.token) });
    expect(me.json().username).toBe(admin.username);
    const posted = await send(jar, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'bearer-wins' }, headers: bearer(admin.token) });
    expect(posted.statusCode).toBe(201);
    // A bad Authorization header is not rescued by a good cookie.
    const bad = await send(jar, { url: '/api/v1/auth/me', headers: { authorization: 'Bearer not.a.jwt' } });
    expect(bad.statusCode).toBe(401);
  });

  it('an expired access cookie is 401 like an expired bearer token', async () => {
    const { jar } = await signIn(tenant.users.auditor.username);
    t.clock.advance(3600_000 + 1000);
    const res = await send(jar, { url: '/api/v1/auth/me' });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toBe('token expired');
    const garbage = await send({ cg_session: 'not.a.jwt' }, { url: '/api/v1/auth/me' });
    expect(garbage.json().error).toMatchObject({ code: 'UNAUTHORIZED', message: 'invalid token' });
    // Without any credential the answer is the one every client knows.
    expect((await send({}, { url: '/api/v1/auth/me' })).json().error.message).toBe('missing bearer token');
  });
});

describe('POST /auth/session/refresh', () => {
  it('rotates through the cookies: new cookies, the Me body, the old refresh cookie spent', async () => {
    const { jar } = await signIn(tenant.users.auditor.username);
    t.clock.advance(60_000);
    const res = await send(jar, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.json()).sort()).toEqual(meKeys);
    expect(res.json().expires_at).toBe(new Date(t.clock.now().getTime() + 3600_000).toISOString());
    const next = keep(jar, res);
    expect(next.cg_session).not.toBe(jar.cg_session);
    expect(next.cg_refresh).not.toBe(jar.cg_refresh);
    expect(cookieNamed(res, 'cg_refresh')).toMatchObject({ path: '/api/v1/auth/session', httpOnly: true, sameSite: 'Strict', maxAge: 7 * 86400 });
    expect((await send(next, { url: '/api/v1/auth/me' })).statusCode).toBe(200);
    expect((await send(next, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF })).statusCode).toBe(200);
  });

  it('reuse of a spent refresh cookie revokes the session, clears the cookies and is audit-logged', async () => {
    const { jar } = await signIn(tenant.users.auditor.username);
    const rotated = keep(jar, await send(jar, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF }));
    const reuse = await send(jar, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF });
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().error.message).toBe('refresh token already used: session revoked');
    expect(cookieNamed(reuse, 'cg_session')).toMatchObject({ value: '', maxAge: 0, path: '/' });
    expect(cookieNamed(reuse, 'cg_refresh')).toMatchObject({ value: '', maxAge: 0, path: '/api/v1/auth/session' });
    expect(reuse.headers['cache-control']).toBe('no-store');
    // The newest cookies of the session are dead too.
    expect((await send(rotated, { url: '/api/v1/auth/me' })).json().error.message).toBe('token revoked');
    expect((await send(rotated, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF })).json().error.message).toBe('refresh token revoked');
    expect((await auditActions('auth.refresh_reuse_detected', tenant.id)).length).toBeGreaterThan(0);
  });

  it('401 and cleared cookies without a refresh cookie, or with an expired one', async () => {
    const none = await send({}, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF });
    expect(none.statusCode).toBe(401);
    expect(none.json().error.message).toBe('no session to refresh: sign in again');
    expect(cookieNamed(none, 'cg_session')?.maxAge).toBe(0);
    expect(cookieNamed(none, 'cg_refresh')?.maxAge).toBe(0);
    const { jar } = await signIn(tenant.users.auditor.username);
    t.clock.advance(7 * 86400_000 + 1000);
    const expired = await send(jar, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF });
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.message).toBe('refresh token expired');
    expect(cookieNamed(expired, 'cg_refresh')?.maxAge).toBe(0);
  });

  it('403 CSRF_REQUIRED without the header; the refresh cookie is not spent', async () => {
    const { jar } = await signIn(tenant.users.auditor.username);
    const res = await send(jar, { method: 'POST', url: '/api/v1/auth/session/refresh' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('CSRF_REQUIRED');
    expect((await send(jar, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF })).statusCode).toBe(200);
  });
});

describe('DELETE /auth/session', () => {
  it('revokes the session like /auth/logout, clears both cookies and answers 204', async () => {
    const { jar } = await signIn(tenant.users.auditor.username);
    const res = await send(jar, { method: 'DELETE', url: '/api/v1/auth/session', headers: CSRF });
    expect(res.statusCode).toBe(204);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(cookieNamed(res, 'cg_session')).toMatchObject({ value: '', maxAge: 0, path: '/', httpOnly: true, sameSite: 'Strict' });
    expect(cookieNamed(res, 'cg_refresh')).toMatchObject({ value: '', maxAge: 0, path: '/api/v1/auth/session' });
    expect((await send(jar, { url: '/api/v1/auth/me' })).json().error.message).toBe('token revoked');
    expect((await send(jar, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF })).json().error.message).toBe('refresh token revoked');
    const logouts = await auditActions('auth.logout', tenant.id);
    expect(logouts.some((a) => a.actor_name === tenant.users.auditor.username && a.target_type === 'session')).toBe(true);
  });

  it('with an expired access cookie still ends the session of the refresh cookie', async () => {
    const { jar } = await signIn(tenant.users.auditor.username);
    t.clock.advance(3600_000 + 1000);
    const before = (await auditActions('auth.logout', tenant.id)).length;
    const res = await send(jar, { method: 'DELETE', url: '/api/v1/auth/session', headers: CSRF });
    expect(res.statusCode).toBe(204);
    expect(cookieNamed(res, 'cg_session')?.maxAge).toBe(0);
    expect((await send(jar, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF })).json().error.message).toBe('refresh token revoked');
    expect((await auditActions('auth.logout', tenant.id)).length).toBe(before + 1);
  });

  it('without cookies (or with worthless ones) just clears them: 204, nothing logged', async () => {
    const before = (await auditActions('auth.logout', tenant.id)).length;
    for (const jar of [{}, { cg_session: 'not.a.jwt', cg_refresh: 'cgr_unknown' }]) {
      const res = await send(jar, { method: 'DELETE', url: '/api/v1/auth/session', headers: CSRF });
      expect(res.statusCode).toBe(204);
      expect(cookieNamed(res, 'cg_session')?.maxAge).toBe(0);
      expect(cookieNamed(res, 'cg_refresh')?.maxAge).toBe(0);
    }
    expect((await auditActions('auth.logout', tenant.id)).length).toBe(before);
  });

  it('403 CSRF_REQUIRED without the header, and the session lives on', async () => {
    const { jar } = await signIn(tenant.users.auditor.username);
    const res = await send(jar, { method: 'DELETE', url: '/api/v1/auth/session' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('CSRF_REQUIRED');
    expect(res.cookies).toEqual([]);
    expect((await send(jar, { url: '/api/v1/auth/me' })).statusCode).toBe(200);
  });
});

describe('tenant and workspace switching of a cookie session', () => {
  it('POST /auth/session/tenant replaces the cookies with a session in the other tenant', async () => {
    const { jar } = await signIn(twoTenants);
    const res = await send(jar, { method: 'POST', url: '/api/v1/auth/session/tenant', payload: { tenant_id: other.id }, headers: CSRF });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toMatchObject({ tenant_id: other.id, workspace_id: other.defaultWorkspaceId, role: 'read-only' });
    expect(res.body).not.toMatch(/cgr_|eyJ/);
    const next = keep(jar, res);
    expect(next.cg_session).not.toBe(jar.cg_session);
    expect(next.cg_refresh).not.toBe(jar.cg_refresh);
    expect(cookieNamed(res, 'cg_session')).toMatchObject({ path: '/', httpOnly: true, sameSite: 'Strict', maxAge: 3600 });
    expect((await send(next, { url: '/api/v1/auth/me' })).json()).toMatchObject({ tenant_id: other.id, role: 'read-only' });
    // The refresh cookie renews the session in the new tenant.
    const refreshed = await send(next, { method: 'POST', url: '/api/v1/auth/session/refresh', headers: CSRF });
    expect(refreshed.json().tenant_id).toBe(other.id);
    expect((await auditActions('auth.tenant_selected', other.id)).length).toBeGreaterThan(0);
  });

  it('403 for a tenant the user does not belong to, 403 CSRF_REQUIRED without the header, 401 without a session', async () => {
    const { jar } = await signIn(tenant.users.auditor.username);
    const foreign = await send(jar, { method: 'POST', url: '/api/v1/auth/session/tenant', payload: { tenant_id: other.id }, headers: CSRF });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().error.message).toBe('no access to this tenant');
    expect(foreign.cookies).toEqual([]);
    const noHeader = await send(jar, { method: 'POST', url: '/api/v1/auth/session/tenant', payload: { tenant_id: tenant.id } });
    expect(noHeader.json().error.code).toBe('CSRF_REQUIRED');
    const anonymous = await send({}, { method: 'POST', url: '/api/v1/auth/session/tenant', payload: { tenant_id: tenant.id }, headers: CSRF });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['cache-control']).toBe('no-store');
  });

  it('POST /auth/session/workspace replaces the cookies with a session in the workspace; 404 for a foreign one', async () => {
    const { jar } = await signIn(tenant.admin.username);
    const created = await send(jar, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'session-staging' }, headers: CSRF });
    expect(created.statusCode).toBe(201);
    const res = await send(jar, { method: 'POST', url: '/api/v1/auth/session/workspace', payload: { workspace_id: created.json().id }, headers: CSRF });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().workspace_id).toBe(created.json().id);
    const next = keep(jar, res);
    expect((await send(next, { url: '/api/v1/auth/me' })).json().workspace_id).toBe(created.json().id);
    const foreign = await send(next, { method: 'POST', url: '/api/v1/auth/session/workspace', payload: { workspace_id: other.defaultWorkspaceId }, headers: CSRF });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.cookies).toEqual([]);
  });
});

describe('Secure cookies', () => {
  it('are not Secure over http, even when an untrusted client claims X-Forwarded-Proto: https', async () => {
    const res = await send(
      {},
      {
        method: 'POST',
        url: '/api/v1/auth/session',
        payload: { username: tenant.users.auditor.username, password: PASSWORD },
        headers: { ...CSRF, 'x-forwarded-proto': 'https' },
      },
    );
    expect(res.statusCode).toBe(200);
    expect(cookieNamed(res, 'cg_session')?.secure).toBeUndefined();
    expect(cookieNamed(res, 'cg_refresh')?.secure).toBeUndefined();
  });

  it('are Secure when a trusted proxy says the request came over https', async () => {
    const proxied = await createTestApp({ env: { CONTROLGRAPH_TRUSTED_PROXIES: '127.0.0.1' } });
    try {
      const signInVia = (headers: Record<string, string>, remoteAddress: string) =>
        proxied.app.inject({
          method: 'POST',
          url: '/api/v1/auth/session',
          payload: { username: 'admin', password: 'admin-password-for-tests' },
          headers: { ...CSRF, ...headers },
          remoteAddress,
        });
      const https = await signInVia({ 'x-forwarded-proto': 'https' }, '127.0.0.1');
      expect(https.statusCode, https.body).toBe(200);
      expect(cookieNamed(https, 'cg_session')).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict', path: '/' });
      expect(cookieNamed(https, 'cg_refresh')).toMatchObject({ secure: true, path: '/api/v1/auth/session' });
      const cleared = await proxied.app.inject({ method: 'DELETE', url: '/api/v1/auth/session', headers: { ...CSRF, 'x-forwarded-proto': 'https' } });
      expect(cookieNamed(cleared, 'cg_session')).toMatchObject({ secure: true, maxAge: 0 });
      // The same header from an address that is not a trusted proxy counts for nothing.
      const spoofed = await signInVia({ 'x-forwarded-proto': 'https' }, '192.0.2.10');
      expect(spoofed.statusCode).toBe(200);
      expect(cookieNamed(spoofed, 'cg_session')?.secure).toBeUndefined();
    } finally {
      await proxied.close();
    }
  });
});
