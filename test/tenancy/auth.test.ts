import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, decodeJwt } from 'jose';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, login, loginAdmin, PASSWORD, type TenantFixture } from '../harness/identity.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
});
afterAll(() => t.close());

const me = (token: string) => call(t.app, token, { url: '/api/v1/auth/me' });

describe('POST /auth/token', () => {
  it('returns the token response with the spec fields, refresh_token and expires_at', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { username: tenant.users.auditor.username, password: PASSWORD } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(
      [
        'account_id',
        'expires_at',
        'mfa_enrollment_required',
        'onboarding_completed',
        'refresh_expires_at',
        'refresh_token',
        'role',
        'tenant_id',
        'token',
        'user_id',
        'username',
        'workspace_id',
      ].sort(),
    );
    expect(body).toMatchObject({
      tenant_id: tenant.id,
      workspace_id: tenant.defaultWorkspaceId,
      role: 'auditor',
      onboarding_completed: false,
      mfa_enrollment_required: false,
    });
    expect(body.expires_at).toBe('2026-11-23T13:00:00.000Z');
    expect(body.refresh_expires_at).toBe('2026-11-30T12:00:00.000Z');
    const claims = decodeJwt(body.token);
    expect(claims).toMatchObject({ user_id: body.user_id, account_id: body.account_id, tenant_id: tenant.id, workspace_id: tenant.defaultWorkspaceId, role: 'auditor' });
    expect(typeof claims.jti).toBe('string');
    expect(claims.exp! - claims.iat!).toBe(3600);
  });

  it("logs into the user's first tenant (oldest membership)", async () => {
    // The security-analyst of `tenant` is added to `other` later (by a system-admin, who links
    // existing users directly): login still lands in `tenant`.
    t.clock.advance(1000);
    await call(t.app, (await loginAdmin(t)).token, {
      method: 'POST',
      url: `/api/v1/tenants/${other.id}/users`,
      payload: { username: tenant.users['security-analyst'].username, role: 'read-only' },
      expect: 201,
    });
    const session = await login(t.app, tenant.users['security-analyst'].username, PASSWORD);
    expect(session.tenant_id).toBe(tenant.id);
    expect(session.role).toBe('security-analyst');
  });

  it('answers 401 with the same message for an unknown user and a wrong password', async () => {
    const unknown = await t.app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { username: 'nobody-here', password: 'whatever-password' } });
    const wrong = await t.app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { username: tenant.users.auditor.username, password: 'wrong-password-123' } });
    expect(unknown.statusCode).toBe(401);
    expect(wrong.statusCode).toBe(401);
    expect(unknown.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: 'invalid username or password', details: null } });
    expect(wrong.json()).toEqual(unknown.json());
  });

  it('treats usernames case-insensitively', async () => {
    const session = await login(t.app, tenant.users.auditor.username.toUpperCase(), PASSWORD);
    expect(session.username).toBe(tenant.users.auditor.username);
  });

  it('throttles a username after 5 failures with 429 and retry_after, for unknown users too', async () => {
    for (const username of [tenant.users['read-only'].username, 'ghost-user']) {
      for (let i = 0; i < 5; i++) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { username, password: 'not-the-password' } });
        expect(res.statusCode).toBe(401);
      }
      const locked = await t.app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { username, password: 'not-the-password' } });
      expect(locked.statusCode).toBe(429);
      expect(locked.json().error.code).toBe('RATE_LIMITED');
      expect(locked.json().retry_after).toBe(900);
    }
    // Even the right password waits out the lock.
    const right = await t.app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { username: tenant.users['read-only'].username, password: PASSWORD } });
    expect(right.statusCode).toBe(429);
    t.clock.advance(15 * 60_000 + 1000);
    await login(t.app, tenant.users['read-only'].username, PASSWORD);
  });

  it('throttles a client address after 50 failures, whatever the usernames', async () => {
    const from = (username: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/auth/token', remoteAddress: '198.51.100.23', payload: { username, password: 'not-the-password' } });
    for (let i = 0; i < 50; i++) expect((await from(`spray-${i}`)).statusCode).toBe(401);
    const locked = await from('spray-final');
    expect(locked.statusCode).toBe(429);
    // Other addresses are unaffected.
    const elsewhere = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      remoteAddress: '198.51.100.24',
      payload: { username: tenant.users.auditor.username, password: PASSWORD },
    });
    expect(elsewhere.statusCode).toBe(200);
  });

  it('records logins and failed logins in the audit log', async () => {
    const res = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=auth.login*&per_page=500`, expect: 200 });
    const actions = res.json().items.map((e: { action: string }) => e.action);
    expect(actions).toContain('auth.login');
    expect(actions).toContain('auth.login_failed');
  });
});

describe('access token validation', () => {
  it('401 without a token, with a malformed header, or with garbage', async () => {
    const missing = await t.app.inject({ url: '/api/v1/auth/me' });
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error).toEqual({ code: 'UNAUTHORIZED', message: 'missing bearer token', details: null });
    const basic = await t.app.inject({ url: '/api/v1/auth/me', headers: { authorization: 'Basic abc' } });
    expect(basic.statusCode).toBe(401);
    expect(basic.json().error.message).toMatch(/malformed authorization header/);
    expect((await me('not.a.jwt')).statusCode).toBe(401);
  });

  it('401 for an expired token', async () => {
    const session = await login(t.app, tenant.users.auditor.username, PASSWORD);
    expect((await me(session.token)).statusCode).toBe(200);
    t.clock.advance(3600_000 + 1000);
    const expired = await me(session.token);
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.message).toBe('token expired');
  });

  it('401 for a token signed with another key', async () => {
    const claims = decodeJwt(tenant.admin.token);
    const forged = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('not-the-secret'));
    const res = await me(forged);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toBe('invalid token');
  });

  it('401 for alg none and for any algorithm other than the pinned one', async () => {
    const session = await login(t.app, tenant.users.auditor.username, PASSWORD);
    const [, payload] = session.token.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    expect((await me(none)).statusCode).toBe(401);
    // Same claims signed with HS512 by someone who knows nothing: refused by the algorithm pin alone.
    const hs512 = await new SignJWT({ ...decodeJwt(session.token) }).setProtectedHeader({ alg: 'HS512' }).sign(new Uint8Array(64));
    expect((await me(hs512)).statusCode).toBe(401);
  });

  it('401 with a tampered payload', async () => {
    const [header, payload, signature] = tenant.admin.token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    claims.role = 'system-admin';
    const tampered = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    expect((await me(tampered)).statusCode).toBe(401);
  });
});

describe('GET /auth/me', () => {
  it('describes the user, tenant, workspace, role and permissions', async () => {
    const session = await login(t.app, tenant.users.auditor.username, PASSWORD);
    const res = await me(session.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      auth_type: 'jwt',
      user_id: session.user_id,
      username: session.username,
      tenant_id: tenant.id,
      workspace_id: tenant.defaultWorkspaceId,
      role: 'auditor',
      is_system_admin: false,
    });
    expect(res.json().permissions).toContain('logs:read');
    expect(res.json().permissions).not.toContain('audit:run');
  });
});

describe('POST /auth/refresh', () => {
  it('rotates: the new pair works, the old refresh token is spent', async () => {
    const session = await login(t.app, tenant.users.auditor.username, PASSWORD);
    t.clock.advance(60_000);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: session.refresh_token } });
    expect(res.statusCode).toBe(200);
    const next = res.json();
    expect(next.token).not.toBe(session.token);
    expect(next.refresh_token).not.toBe(session.refresh_token);
    expect(new Date(next.expires_at).getTime()).toBe(t.clock.now().getTime() + 3600_000);
    expect((await me(next.token)).statusCode).toBe(200);
    const again = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: next.refresh_token } });
    expect(again.statusCode).toBe(200);
  });

  it('reuse of a spent refresh token revokes the whole chain, access tokens included', async () => {
    const session = await login(t.app, tenant.users.auditor.username, PASSWORD);
    const first = (await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: session.refresh_token } })).json();
    const reuse = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: session.refresh_token } });
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().error.message).toBe('refresh token already used: session revoked');
    // The legitimate newest tokens of the chain are dead too.
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: first.refresh_token } })).statusCode).toBe(401);
    expect((await me(first.token)).statusCode).toBe(401);
    expect((await me(session.token)).json().error.message).toBe('token revoked');
    // Another session of the same user is unaffected.
    const otherSession = await login(t.app, tenant.users.auditor.username, PASSWORD);
    expect((await me(otherSession.token)).statusCode).toBe(200);
  });

  it('401 for an unknown or expired refresh token', async () => {
    const unknown = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: 'cgr_nope' } });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json().error.message).toBe('invalid refresh token');
    const session = await login(t.app, tenant.users.auditor.username, PASSWORD);
    t.clock.advance(7 * 86400_000 + 1000);
    const expired = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: session.refresh_token } });
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.message).toBe('refresh token expired');
  });

  it('400 for a missing refresh_token', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: {} });
    expect(res.statusCode).toBe(400);
  });
});

describe('tenant and workspace switching', () => {
  it('select-tenant issues a token for another tenant the user belongs to, with the role there', async () => {
    const username = tenant.users['security-analyst'].username; // also read-only in `other` (see above)
    const session = await login(t.app, username, PASSWORD);
    const res = await call(t.app, session.token, { method: 'POST', url: '/api/v1/auth/select-tenant', payload: { tenant_id: other.id } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ tenant_id: other.id, role: 'read-only', workspace_id: other.defaultWorkspaceId });
    expect((await me(res.json().token)).json().role).toBe('read-only');
  });

  it('select-tenant answers 403 for a tenant the user does not belong to', async () => {
    const auditor = await fresh(t, tenant.users.auditor);
    const res = await call(t.app, auditor.token, { method: 'POST', url: '/api/v1/auth/select-tenant', payload: { tenant_id: other.id } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toEqual({ code: 'FORBIDDEN', message: 'no access to this tenant', details: null });
  });

  it('a token of one tenant is refused on another tenant path with 403', async () => {
    const admin = await fresh(t, tenant.admin);
    const res = await call(t.app, admin.token, { url: `/api/v1/tenants/${other.id}/users` });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('no access to this tenant');
  });

  it('switch-workspace binds a new token to another workspace of the tenant; 404 for a foreign one', async () => {
    const admin = await fresh(t, tenant.admin);
    const created = await call(t.app, admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'staging' }, expect: 201 });
    const res = await call(t.app, admin.token, { method: 'POST', url: '/api/v1/auth/switch-workspace', payload: { workspace_id: created.json().id } });
    expect(res.statusCode).toBe(200);
    expect(res.json().workspace_id).toBe(created.json().id);
    expect((await me(res.json().token)).json().workspace_id).toBe(created.json().id);
    const foreign = await call(t.app, admin.token, { method: 'POST', url: '/api/v1/auth/switch-workspace', payload: { workspace_id: other.defaultWorkspaceId } });
    expect(foreign.statusCode).toBe(404);
  });

  it('system-admin spans tenants: other tenants are reachable with the same token', async () => {
    const system = await loginAdmin(t);
    const res = await call(t.app, system.token, { url: `/api/v1/tenants/${other.id}/users` });
    expect(res.statusCode).toBe(200);
    expect((await call(t.app, system.token, { url: '/api/v1/tenants/00000000-0000-4000-8000-000000000000/users' })).statusCode).toBe(404);
  });
});

describe('POST /auth/logout', () => {
  it("revokes the access token's jti and its refresh chain", async () => {
    const session = await login(t.app, tenant.users.auditor.username, PASSWORD);
    const refreshed = (await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: session.refresh_token } })).json();
    const res = await call(t.app, refreshed.token, { method: 'POST', url: '/api/v1/auth/logout' });
    expect(res.statusCode).toBe(204);
    expect((await me(refreshed.token)).statusCode).toBe(401);
    expect((await me(session.token)).statusCode).toBe(401);
    const refresh = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: refreshed.refresh_token } });
    expect(refresh.statusCode).toBe(401);
    const admin = await fresh(t, tenant.admin);
    const log = await call(t.app, admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=auth.logout`, expect: 200 });
    expect(log.json().items[0]).toMatchObject({ action: 'auth.logout', actor_id: session.user_id });
  });

  it('removing a membership takes effect on existing tokens', async () => {
    const victim = await login(t.app, tenant.users['read-only'].username, PASSWORD);
    const admin = await fresh(t, tenant.admin);
    await call(t.app, admin.token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/users/${victim.user_id}`, expect: 204 });
    const res = await me(victim.token);
    expect(res.statusCode).toBe(401);
  });
});

describe('token lifetimes from the configuration', () => {
  // CONTROLGRAPH_ACCESS_TOKEN_TTL and CONTROLGRAPH_REFRESH_TOKEN_TTL instead of the defaults (1h, 7d).
  let custom: TestApp;
  beforeAll(async () => {
    custom = await createTestApp({ env: { CONTROLGRAPH_ACCESS_TOKEN_TTL: '15m', CONTROLGRAPH_REFRESH_TOKEN_TTL: '2d' } });
  });
  afterAll(() => custom?.close());

  const expectLifetimes = (body: { token: string; expires_at?: unknown; refresh_expires_at?: unknown }, issuedAt: number) => {
    expect(body.expires_at).toBe(new Date(issuedAt + 15 * 60_000).toISOString());
    expect(body.refresh_expires_at).toBe(new Date(issuedAt + 2 * 86_400_000).toISOString());
    const claims = decodeJwt(body.token);
    expect(claims.exp! * 1000).toBe(issuedAt + 15 * 60_000);
    expect(claims.exp! - claims.iat!).toBe(15 * 60);
  };

  it('sets expires_at, refresh_expires_at and the JWT exp at login and refresh, and both are enforced', async () => {
    expect(custom.deps.config).toMatchObject({ accessTokenTtlMs: 15 * 60_000, refreshTokenTtlMs: 2 * 86_400_000 });
    const session = await loginAdmin(custom);
    expectLifetimes(session, custom.clock.now().getTime());
    const meOf = (token: string) => call(custom.app, token, { url: '/api/v1/auth/me' });
    // The access token ends after 15 minutes, not an hour.
    custom.clock.advance(15 * 60_000 - 1000);
    expect((await meOf(session.token)).statusCode).toBe(200);
    custom.clock.advance(1000);
    expect((await meOf(session.token)).statusCode).toBe(401);
    const refreshed = await custom.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: session.refresh_token } });
    expect(refreshed.statusCode).toBe(200);
    expectLifetimes(refreshed.json(), custom.clock.now().getTime());
    // The refresh token ends after 2 days, not 7.
    const last = refreshed.json().refresh_token;
    custom.clock.advance(2 * 86_400_000 + 1000);
    const expired = await custom.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: last } });
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.message).toBe('refresh token expired');
  });
});
