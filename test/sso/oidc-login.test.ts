import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { CookieJar, driveLogin, startOidcIdp, type TestOidcIdp } from './oidc-idp.js';

/**
 * The OIDC login against a real OpenID provider (oidc-provider on a loopback port): the whole
 * authorization-code flow is driven with fetch through the provider's login and consent pages, and
 * the provider is made to misbehave (tampered ID tokens) to prove each ID-token check.
 */
let t: TestApp;
let tenant: TenantFixture;
let idp: TestOidcIdp;
let base: string;
let loginUrl: string;
let callbackUrl: string;

async function configure(extra: Record<string, unknown> = {}) {
  return call(t.app, tenant.admin.token, {
    method: 'PUT',
    url: `/api/v1/tenants/${tenant.id}/sso`,
    payload: { provider: 'keycloak', issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, service_url: base, default_role: 'auditor', ...extra },
  });
}

/** Starts a login like a browser: our redirect (and cookie), then the provider's pages, back to our callback URL. */
async function loginAt(subject: string, jar = new CookieJar()): Promise<{ callback: string; jar: CookieJar; authorize: URL }> {
  const start = await fetch(loginUrl, { redirect: 'manual' });
  expect(start.status).toBe(302);
  jar.store(loginUrl, start);
  const authorize = new URL(start.headers.get('location')!);
  const callback = await driveLogin(authorize.href, callbackUrl, jar, subject);
  return { callback, jar, authorize };
}

async function finish(callback: string, jar: CookieJar) {
  const response = await fetch(callback, { redirect: 'manual', headers: { cookie: jar.header(callback) } });
  jar.store(callback, response);
  const body: any = response.status === 303 ? null : await response.json();
  return { status: response.status, body, headers: response.headers };
}

function getSetCookies(response: Response): string[] {
  return response.headers.getSetCookie();
}

async function auditActions(action: string) {
  return t.db.handle.db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenant.id).where('action', '=', action).execute();
}

beforeAll(async () => {
  // The provider signs with the real clock; the service's manual clock starts there too.
  // The fake IdPs listen on loopback: allow-listed explicitly, as an operator would for a local IdP.
  t = await createTestApp({ clockStart: new Date().toISOString(), env: { CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  tenant = await buildTenant(t);
  loginUrl = `${base}/api/v1/auth/oidc/${tenant.slug}/login`;
  callbackUrl = `${base}/api/v1/auth/oidc/${tenant.slug}/callback`;
  idp = await startOidcIdp({ redirectUris: [callbackUrl], idTokenTtlSeconds: 120 });
  const res = await configure();
  expect(res.statusCode, res.body).toBe(201);
});
afterAll(async () => {
  await idp?.close();
  await t?.close();
});
beforeEach(() => {
  t.clock.set(new Date());
  idp.tamperIdToken = null;
  idp.tamperWithForeignKey = false;
});

describe('OIDC login with a real provider', () => {
  it('runs the authorization-code flow with PKCE, state and nonce and signs a new user in just in time', async () => {
    idp.accounts.set('alice-sub', { email: 'Alice@Corp.example', email_verified: true, name: 'Alice A', preferred_username: 'alice' });
    const { callback, jar, authorize } = await loginAt('alice-sub');
    expect(authorize.origin).toBe(idp.issuer);
    expect(authorize.searchParams.get('response_type')).toBe('code');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(authorize.searchParams.get('redirect_uri')).toBe(callbackUrl);
    expect(authorize.searchParams.get('scope')).toBe('openid email profile');
    expect(jar.header(loginUrl)).toMatch(/^cg_sso_[A-Za-z0-9_-]{16}=/);

    const result = await finish(callback, jar);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.headers.get('cache-control')).toBe('no-store');
    const tokens = result.body;
    expect(tokens).toMatchObject({ tenant_id: tenant.id, workspace_id: tenant.defaultWorkspaceId, role: 'auditor', onboarding_completed: false });
    expect(tokens.token).toBeTruthy();
    expect(tokens.refresh_token).toMatch(/^cgr_/);
    expect(tokens.username).toBe(`${tenant.slug}.alice@corp.example`);
    // The login cookie is cleared once used.
    expect(jar.header(callbackUrl)).toBe('');

    const me = await call(t.app, tokens.token, { method: 'GET', url: '/api/v1/auth/me', expect: 200 });
    expect(me.json()).toMatchObject({ user_id: tokens.user_id, role: 'auditor', tenant_id: tenant.id });
    await call(t.app, tokens.token, { method: 'GET', url: `/api/v1/tenants/${tenant.id}/sso`, expect: 200 });
    const refreshed = await call(t.app, null, { method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: tokens.refresh_token }, expect: 200 });
    expect(refreshed.json().user_id).toBe(tokens.user_id);

    const identity = await t.db.handle.db.selectFrom('sso_identities').selectAll().where('user_id', '=', tokens.user_id).executeTakeFirstOrThrow();
    expect(identity).toMatchObject({ tenant_id: tenant.id, protocol: 'oidc', issuer: idp.issuer, subject: 'alice-sub', email: 'Alice@Corp.example', display_name: 'Alice A' });
    const user = await t.db.handle.db.selectFrom('users').selectAll().where('id', '=', tokens.user_id).executeTakeFirstOrThrow();
    expect(user.password_hash).toBeNull();
    // No password login for an SSO user.
    const password = await call(t.app, null, { method: 'POST', url: '/api/v1/auth/token', payload: { username: tokens.username, password: 'whatever-password' } });
    expect(password.statusCode).toBe(401);

    const provisioned = await auditActions('sso.user_provisioned');
    expect(provisioned.some((a) => a.target_id === tokens.user_id)).toBe(true);
    const logins = await auditActions('auth.sso_login');
    expect(logins.find((a) => a.target_id === tokens.user_id)?.details).toMatchObject({ protocol: 'oidc', issuer: idp.issuer, subject: 'alice-sub' });
    // The state row is gone: one-time.
    expect(await t.db.handle.db.selectFrom('sso_login_states').selectAll().where('tenant_id', '=', tenant.id).execute()).toHaveLength(0);
  });

  it('keys the user by issuer and subject: a changed e-mail is the same user, the old e-mail under another subject is not', async () => {
    idp.accounts.set('bob-sub', { email: 'bob@corp.example', name: 'Bob' });
    const first = await loginAt('bob-sub').then((l) => finish(l.callback, l.jar));
    expect(first.status).toBe(200);
    idp.accounts.set('bob-sub', { email: 'robert@corp.example', name: 'Robert' });
    const second = await loginAt('bob-sub').then((l) => finish(l.callback, l.jar));
    expect(second.status).toBe(200);
    expect(second.body.user_id).toBe(first.body.user_id);
    const identity = await t.db.handle.db.selectFrom('sso_identities').selectAll().where('subject', '=', 'bob-sub').executeTakeFirstOrThrow();
    expect(identity.email).toBe('robert@corp.example');

    idp.accounts.set('mallory-sub', { email: 'bob@corp.example', name: 'Mallory' });
    const other = await loginAt('mallory-sub').then((l) => finish(l.callback, l.jar));
    expect(other.status).toBe(200);
    expect(other.body.user_id).not.toBe(first.body.user_id);
    expect(other.body.username).not.toBe(first.body.username);
  });

  it('keeps a role an admin changed after the first login, and refuses a user whose membership was removed', async () => {
    idp.accounts.set('carol-sub', { email: 'carol@corp.example' });
    const first = (await loginAt('carol-sub').then((l) => finish(l.callback, l.jar))).body;
    expect(first.role).toBe('auditor');
    await call(t.app, tenant.admin.token, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}/users/${first.user_id}/role`, payload: { role: 'security-analyst' }, expect: 200 });
    const second = (await loginAt('carol-sub').then((l) => finish(l.callback, l.jar))).body;
    expect(second.role).toBe('security-analyst');

    await call(t.app, tenant.admin.token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/users/${first.user_id}`, expect: 204 });
    const refused = await loginAt('carol-sub').then((l) => finish(l.callback, l.jar));
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/no longer a member of this tenant/);
  });

  it('uses the state once: replaying the callback is refused', async () => {
    idp.accounts.set('dave-sub', { email: 'dave@corp.example' });
    const { callback, jar } = await loginAt('dave-sub');
    const cookie = jar.header(callback);
    expect((await finish(callback, jar)).status).toBe(200);
    const replay = await fetch(callback, { headers: { cookie } });
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as any).error).toMatchObject({ code: 'UNAUTHORIZED', message: 'unknown or already used login state: start the login again' });
  });

  it('refuses a callback that arrives in another browser (without the login cookie)', async () => {
    idp.accounts.set('erin-sub', {});
    const { callback } = await loginAt('erin-sub');
    const res = await fetch(callback);
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.message).toBe('this login was not started in this browser (login cookie missing or different)');
  });

  it('refuses a login state older than ten minutes', async () => {
    idp.accounts.set('frank-sub', {});
    const { callback, jar } = await loginAt('frank-sub');
    t.clock.advance(10 * 60_000 + 1_000);
    const res = await finish(callback, jar);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe('login state expired: start the login again');
  });

  it('refuses an expired ID token (checked against the service clock)', async () => {
    idp.accounts.set('gina-sub', {});
    const { callback, jar } = await loginAt('gina-sub');
    // The provider issues ID tokens for 120 s; five minutes later (still within the state's life) it has expired.
    t.clock.advance(5 * 60_000);
    const res = await finish(callback, jar);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/^OIDC login failed: .*"exp"/);
  });

  it.each([
    ['nonce', (c: Record<string, unknown>) => ({ ...c, nonce: 'a-nonce-from-another-login' }), /"nonce"/],
    ['audience', (c: Record<string, unknown>) => ({ ...c, aud: 'another-client' }), /"aud"/],
    ['issuer', (c: Record<string, unknown>) => ({ ...c, iss: 'http://127.0.0.1:1' }), /"iss"/],
  ])('refuses an ID token with the wrong %s', async (_name, tamper, message) => {
    idp.accounts.set('henry-sub', {});
    const { callback, jar } = await loginAt('henry-sub');
    idp.tamperIdToken = tamper;
    const res = await finish(callback, jar);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/^OIDC login failed: /);
    expect(res.body.error.message).toMatch(message);
    expect(await t.db.handle.db.selectFrom('sso_identities').select('id').where('subject', '=', 'henry-sub').execute()).toHaveLength(0);
  });

  it('refuses an ID token not signed with a key of the provider', async () => {
    idp.accounts.set('ivy-sub', {});
    const { callback, jar } = await loginAt('ivy-sub');
    idp.tamperIdToken = (c) => c;
    idp.tamperWithForeignKey = true;
    const res = await finish(callback, jar);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/^OIDC login failed: .*signature/i);
  });

  it("answers the provider's error with 401 and logs the failure", async () => {
    idp.accounts.set('jack-sub', {});
    const { callback, jar } = await loginAt('jack-sub');
    const state = new URL(callback).searchParams.get('state')!;
    const res = await finish(`${callbackUrl}?error=access_denied&error_description=End-User+aborted&state=${state}`, jar);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe('the identity provider refused the login: access_denied: End-User aborted');
    const failures = await auditActions('auth.sso_login_failed');
    expect(failures.some((f) => (f.details as { reason?: string }).reason === res.body.error.message)).toBe(true);
    // An error callback without a state of ours is a forged one, refused as such.
    const forged = await finish(`${callbackUrl}?error=access_denied&state=not-a-state-of-ours`, jar);
    expect(forged.status).toBe(401);
    expect(forged.body.error.message).toBe('unknown or already used login state: start the login again');
  });

  it('redirects to the configured app URL with the token response in the fragment, never the query', async () => {
    expect((await configure({ app_redirect_url: 'http://127.0.0.1:5173/sso/done?from=cg' })).statusCode).toBe(200);
    try {
      idp.accounts.set('kate-sub', { email: 'kate@corp.example' });
      const { callback, jar } = await loginAt('kate-sub');
      const res = await finish(callback, jar);
      expect(res.status).toBe(303);
      const location = new URL(res.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1:5173/sso/done');
      expect([...location.searchParams.keys()]).toEqual(['from']);
      const fragment = new URLSearchParams(location.hash.slice(1));
      expect(fragment.get('tenant_id')).toBe(tenant.id);
      expect(fragment.get('role')).toBe('auditor');
      await call(t.app, fragment.get('token'), { method: 'GET', url: '/api/v1/auth/me', expect: 200 });
    } finally {
      expect((await configure()).statusCode).toBe(200);
    }
  });

  describe('landing in the web console (?to=console)', () => {
    /** A browser's login started at `url`, through the provider's pages, back to our callback. */
    async function consoleLogin(subject: string, url = `${loginUrl}?to=console`) {
      const jar = new CookieJar();
      const start = await fetch(url, { redirect: 'manual' });
      expect(start.status).toBe(302);
      jar.store(loginUrl, start);
      const authorize = new URL(start.headers.get('location')!);
      const callback = await driveLogin(authorize.href, callbackUrl, jar, subject);
      return { start, authorize, callback, jar };
    }

    function setCookie(response: Response, name: string): string | undefined {
      return response.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
    }

    it('sets the session cookies and answers 303 to / with no token in the URL', async () => {
      idp.accounts.set('lena-sub', { email: 'lena@corp.example' });
      const { start, authorize, callback, jar } = await consoleLogin('lena-sub');
      // The browser binding stays SameSite=Lax: the IdP's redirect back is a cross-site navigation,
      // which carries Lax cookies and not Strict ones. The landing rides in it, not in the IdP's URL.
      expect(start.headers.getSetCookie()[0]).toMatch(/^cg_sso_[A-Za-z0-9_-]{16}=[A-Za-z0-9_-]+\.console; Path=[^;]+; Max-Age=600; HttpOnly; SameSite=Lax$/);
      expect(authorize.href).not.toMatch(/console/);

      const res = await fetch(callback, { redirect: 'manual', headers: { cookie: jar.header(callback) } });
      expect(res.status, await res.clone().text()).toBe(303);
      expect(res.headers.get('location')).toBe('/');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(setCookie(res, 'cg_session')).toMatch(/^cg_session=[\w-]+\.[\w-]+\.[\w-]+; Max-Age=3600; Path=\/; HttpOnly; SameSite=Strict$/);
      expect(setCookie(res, 'cg_refresh')).toMatch(/^cg_refresh=cgr_[\w-]+; Max-Age=604800; Path=\/api\/v1\/auth\/session; HttpOnly; SameSite=Strict$/);
      // The one-time binding cookie is cleared as before.
      expect(res.headers.getSetCookie().some((c) => /^cg_sso_[A-Za-z0-9_-]{16}=; .*Max-Age=0/.test(c))).toBe(true);

      // The console's first request carries the cookie alone.
      const session = setCookie(res, 'cg_session')!.split(';')[0]!;
      const me = await fetch(`${base}/api/v1/auth/me`, { headers: { cookie: session } });
      expect(me.status).toBe(200);
      const body = (await me.json()) as any;
      expect(body).toMatchObject({ auth_type: 'jwt', tenant_id: tenant.id, role: 'auditor', username: `${tenant.slug}.lena@corp.example` });
      const logins = await auditActions('auth.sso_login');
      expect(logins.some((a) => a.target_id === body.user_id)).toBe(true);
    });

    it("wins over the tenant's app URL", async () => {
      expect((await configure({ app_redirect_url: 'http://127.0.0.1:5173/sso/done' })).statusCode).toBe(200);
      try {
        idp.accounts.set('mona-sub', {});
        const { callback, jar } = await consoleLogin('mona-sub');
        const res = await fetch(callback, { redirect: 'manual', headers: { cookie: jar.header(callback) } });
        expect(res.status).toBe(303);
        expect(res.headers.get('location')).toBe('/');
        expect(setCookie(res, 'cg_session')).toBeTruthy();
      } finally {
        expect((await configure()).statusCode).toBe(200);
      }
    });

    it('cannot be added or removed between the start and the callback (the binding cookie is hashed whole)', async () => {
      idp.accounts.set('nina-sub', {});
      const toConsole = await consoleLogin('nina-sub');
      const stripped = toConsole.jar.header(toConsole.callback).replace('.console', '');
      const refused = await fetch(toConsole.callback, { redirect: 'manual', headers: { cookie: stripped } });
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as any).error.message).toBe('this login was not started in this browser (login cookie missing or different)');

      const plain = await consoleLogin('nina-sub', loginUrl);
      const added = plain.jar.header(plain.callback).replace(/^(cg_sso_[^=]+=[A-Za-z0-9_-]+)/, '$1.console');
      const alsoRefused = await fetch(plain.callback, { redirect: 'manual', headers: { cookie: added } });
      expect(alsoRefused.status).toBe(401);
      expect(getSetCookies(alsoRefused).some((c) => c.startsWith('cg_session='))).toBe(false);
    });

    it('takes only a landing name: anything else in `to` is 400, other parameters are ignored as before', async () => {
      for (const to of ['https://evil.example/', '//evil.example', 'Console']) {
        const res = await fetch(`${loginUrl}?to=${encodeURIComponent(to)}`, { redirect: 'manual' });
        expect(res.status).toBe(400);
        expect(((await res.json()) as any).error.message).toMatch(/^invalid querystring: .*to.*console/);
      }
      expect((await fetch(`${loginUrl}?utm_source=mail`, { redirect: 'manual' })).status).toBe(302);
    });
  });

  it('answers 404 for an unknown slug and for a tenant without OIDC', async () => {
    const unknown = await fetch(`${base}/api/v1/auth/oidc/no-such-tenant-slug/login`, { redirect: 'manual' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).error.message).toBe('OIDC single sign-on is not configured for this tenant');
    const other = await buildTenant(t);
    const res = await fetch(`${base}/api/v1/auth/oidc/${other.slug}/callback?state=x&code=y`, { redirect: 'manual' });
    expect(res.status).toBe(404);
  });

  it('applies the login throttle per client address (429 once locked)', async () => {
    const remoteAddress = '203.0.113.77';
    for (let i = 0; i < 50; i++) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/${tenant.slug}/callback?state=forged-${i}&code=x`, remoteAddress });
      expect(res.statusCode).toBe(401);
    }
    const locked = await t.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/${tenant.slug}/callback?state=forged&code=x`, remoteAddress });
    expect(locked.statusCode).toBe(429);
    expect(locked.json().retry_after).toBeGreaterThan(0);
    // Nor can it start new logins.
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/${tenant.slug}/login`, remoteAddress })).statusCode).toBe(429);
    // Other addresses are not affected.
    const other = await t.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/${tenant.slug}/callback?state=forged&code=x`, remoteAddress: '203.0.113.78' });
    expect(other.statusCode).toBe(401);
  });
});
