import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { addUser, buildTenant, call, createApiKey, PASSWORD, type Session, type TenantFixture } from '../harness/identity.js';
import { acsForm, buildResponse, idpMetadata, makeKeyPair } from '../sso/saml-idp.js';

/**
 * Multi-factor sign-in of password accounts over HTTP: TOTP enrollment with a QR code, login with a
 * code (no replay), single-use recovery codes, turning it off, the tenant's requirement holding a
 * password-only session to enrollment, the audit trail, and codes throttled like passwords.
 */
let t: TestApp;
let tenant: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t.close());

const STEP_MS = 30_000;
/** The authenticator app: the code for the test clock's time (or another). */
const codeAt = (secret: string, at = t.clock.now()) => generate({ secret, epoch: Math.floor(at.getTime() / 1000) });

let address = 0;
/** Each test logs in from its own address, so only the username's guesses matter to the throttle. */
const newAddress = () => `198.51.100.${++address}`;

function login(username: string, otp?: string, remoteAddress = '127.0.0.1') {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/token',
    payload: { username, password: PASSWORD, ...(otp !== undefined ? { otp } : {}) },
    remoteAddress,
  });
}

/** The console's cookie sign-in (the same login): its answer and the session cookie's value. */
async function cookieSignIn(username: string, otp?: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/session',
    headers: { 'x-controlgraph-csrf': '1' },
    payload: { username, password: PASSWORD, ...(otp !== undefined ? { otp } : {}) },
    remoteAddress: newAddress(),
  });
  return { res, cookie: res.cookies.find((c) => c.name === 'cg_session')?.value };
}
const withCookie = (cookie: string, url: string) => t.app.inject({ url, headers: { cookie: `cg_session=${cookie}` } });

const mfaStatus = async (token: string) => (await call(t.app, token, { url: '/api/v1/auth/mfa', expect: 200 })).json();

async function enroll(session: Session): Promise<{ secret: string; recoveryCodes: string[] }> {
  const enrollment = (await call(t.app, session.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll', expect: 200 })).json();
  const confirmed = await call(t.app, session.token, {
    method: 'POST',
    url: '/api/v1/auth/mfa/totp/confirm',
    payload: { code: await codeAt(enrollment.secret) },
    expect: 200,
  });
  // The code of this step is spent by the confirmation: the next login uses the next step's.
  t.clock.advance(STEP_MS);
  return { secret: enrollment.secret, recoveryCodes: confirmed.json().recovery_codes };
}

/** The tenant admin's token; a full (second-factor) session once the admin has enrolled. */
let adminToken = '';
async function auditActions(userId: string): Promise<Array<{ action: string; details: Record<string, unknown> }>> {
  const res = await call(t.app, adminToken || tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?target_id=${userId}&per_page=500`, expect: 200 });
  return res.json().items;
}

describe('TOTP enrollment', () => {
  it('a new user has no second factor; enrollment gives the secret, its otpauth URI and a QR code, and changes nothing until confirmed', async () => {
    const user = await addUser(t, tenant, 'read-only');
    expect(await mfaStatus(user.token)).toEqual({
      totp_enabled: false,
      enrollment_pending: false,
      recovery_codes_left: 0,
      required_by_tenant: false,
      enrollment_required: false,
      password_sign_in: true,
    });
    const res = await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll', expect: 200 });
    const enrollment = res.json();
    expect(enrollment.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(enrollment.otpauth_uri).toBe(`otpauth://totp/ControlGraph:${user.username}?secret=${enrollment.secret}&issuer=ControlGraph`);
    expect(enrollment.qr_svg).toMatch(/^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(enrollment.qr_data_url).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    expect((await mfaStatus(user.token)).enrollment_pending).toBe(true);
    // Pending is not enabled: the password alone still signs in.
    expect((await login(user.username)).statusCode).toBe(200);

    // Stored sealed, never as the secret itself.
    const row = await t.deps.database.db.selectFrom('user_totp').select(['secret_sealed', 'confirmed_at']).where('user_id', '=', user.user_id).executeTakeFirstOrThrow();
    expect(row.secret_sealed).not.toContain(enrollment.secret);
    expect(row.confirmed_at).toBeNull();

    // Enrolling again replaces the pending secret: a code of the first one no longer confirms.
    const second = (await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll', expect: 200 })).json();
    expect(second.secret).not.toBe(enrollment.secret);
    const stale = await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/confirm', payload: { code: await codeAt(enrollment.secret) } });
    expect(stale.statusCode).toBe(400);
  });

  it('a wrong code is 400 with a clear message; the right one enables it and returns 10 single-use recovery codes', async () => {
    const user = await addUser(t, tenant, 'read-only');
    const none = await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/confirm', payload: { code: '123456' } });
    expect(none.statusCode).toBe(409);
    expect(none.json().error.message).toBe('no enrollment in progress: start one with POST /api/v1/auth/mfa/totp/enroll');

    const { secret } = (await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll', expect: 200 })).json();
    const current = await codeAt(secret);
    const wrong = await call(t.app, user.token, {
      method: 'POST',
      url: '/api/v1/auth/mfa/totp/confirm',
      payload: { code: current === '000000' ? '000001' : '000000' },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/^the code does not match the authenticator/) });

    const confirmed = await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/confirm', payload: { code: current }, expect: 200 });
    const codes: string[] = confirmed.json().recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    expect(confirmed.json().sign_in_again).toBe(false);
    expect(await mfaStatus(user.token)).toMatchObject({ totp_enabled: true, enrollment_pending: false, recovery_codes_left: 10 });

    // Only one authenticator at a time.
    const again = await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll' });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.message).toMatch(/^multi-factor sign-in is already enabled/);
    expect((await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/confirm', payload: { code: current } })).statusCode).toBe(409);
    t.clock.advance(STEP_MS);
  });

  it('API keys have no second factor to manage (400)', async () => {
    const { key } = await createApiKey(t, tenant, { permissions: ['findings:read'] });
    const res = await call(t.app, key, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/user token, not an API key/);
  });
});

describe('signing in with a second factor', () => {
  it('the password alone is 401 MFA_REQUIRED; with the code 200; the same code again 401 MFA_INVALID', async () => {
    const user = await addUser(t, tenant, 'read-only');
    const { secret } = await enroll(user);
    const from = newAddress();

    const bare = await login(user.username, undefined, from);
    expect(bare.statusCode).toBe(401);
    expect(bare.json().error).toEqual({
      code: 'MFA_REQUIRED',
      message: 'this account needs its one-time code',
      details: { accepted: ['totp', 'recovery_code'], field: 'otp' },
    });
    // A wrong password is the ordinary failure: the code is never asked before the password is right.
    const wrongPassword = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { username: user.username, password: 'nope', otp: '123456' },
      remoteAddress: from,
    });
    expect(wrongPassword.statusCode).toBe(401);
    expect(wrongPassword.json().error.code).toBe('UNAUTHORIZED');

    const code = await codeAt(secret);
    const ok = await login(user.username, code, from);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().mfa_enrollment_required).toBe(false);
    await call(t.app, ok.json().token, { url: `/api/v1/tenants/${tenant.id}/findings`, expect: 200 });

    const replay = await login(user.username, code, from);
    expect(replay.statusCode).toBe(401);
    expect(replay.json().error).toMatchObject({ code: 'MFA_INVALID', message: 'the one-time code is wrong, expired or already used' });

    // A code from two steps ago has expired; the next step's code works.
    t.clock.advance(2 * STEP_MS);
    expect((await login(user.username, code, from)).json().error.code).toBe('MFA_INVALID');
    expect((await login(user.username, await codeAt(secret), from)).statusCode).toBe(200);

    const actions = await auditActions(user.user_id);
    // Entries of one instant have no order among them: compared as a set.
    const failures = actions.filter((a) => a.action === 'auth.login_failed').map((a) => JSON.stringify(a.details));
    expect(failures.sort()).toEqual(['{"reason":"wrong one-time code"}', '{"reason":"wrong one-time code"}', '{}']);
    expect(actions.filter((a) => a.action === 'auth.login' && a.details.second_factor === 'totp')).toHaveLength(2);
  });

  it("the console's cookie sign-in asks for the code the same way", async () => {
    const user = await addUser(t, tenant, 'read-only');
    const { secret } = await enroll(user);
    const bare = await cookieSignIn(user.username);
    expect(bare.res.statusCode).toBe(401);
    expect(bare.res.json().error.code).toBe('MFA_REQUIRED');
    expect(bare.cookie).toBeUndefined();
    const ok = await cookieSignIn(user.username, await codeAt(secret));
    expect(ok.res.statusCode).toBe(200);
    expect(ok.res.json()).toMatchObject({ username: user.username, mfa_enrollment_required: false });
    expect((await withCookie(ok.cookie!, `/api/v1/tenants/${tenant.id}/findings`)).statusCode).toBe(200);
  });

  it('of two parallel logins with the same code, one signs in', async () => {
    const user = await addUser(t, tenant, 'read-only');
    const { secret } = await enroll(user);
    const code = await codeAt(secret);
    const answers = await Promise.all([login(user.username, code, newAddress()), login(user.username, code, newAddress())]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401]);
  });

  it('a recovery code signs in once (any case, with or without its dash), then is refused', async () => {
    const user = await addUser(t, tenant, 'read-only');
    const { recoveryCodes } = await enroll(user);
    const from = newAddress();
    const first = await login(user.username, recoveryCodes[0], from);
    expect(first.statusCode).toBe(200);
    expect((await mfaStatus(first.json().token)).recovery_codes_left).toBe(9);
    const again = await login(user.username, recoveryCodes[0], from);
    expect(again.statusCode).toBe(401);
    expect(again.json().error.code).toBe('MFA_INVALID');
    expect((await login(user.username, ` ${recoveryCodes[1]!.replace('-', '').toUpperCase()} `, from)).statusCode).toBe(200);

    const used = (await auditActions(user.user_id)).filter((a) => a.action === 'auth.mfa_recovery_code_used');
    expect(used.map((a) => a.details).sort((a, b) => Number(b.recovery_codes_left) - Number(a.recovery_codes_left))).toEqual([
      { recovery_codes_left: 9 },
      { recovery_codes_left: 8 },
    ]);
  });

  it('new recovery codes replace the old ones, with a current code; a wrong code is 400', async () => {
    const user = await addUser(t, tenant, 'read-only');
    const { secret, recoveryCodes } = await enroll(user);
    const wrong = await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/mfa/recovery-codes', payload: { code: 'aaaaa-aaaaa' } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error.message).toMatch(/^the code is wrong, expired or already used/);
    const res = await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/mfa/recovery-codes', payload: { code: await codeAt(secret) }, expect: 200 });
    const fresh: string[] = res.json().recovery_codes;
    expect(fresh).toHaveLength(10);
    expect(fresh.some((c) => recoveryCodes.includes(c))).toBe(false);
    const from = newAddress();
    expect((await login(user.username, recoveryCodes[2], from)).json().error.code).toBe('MFA_INVALID');
    expect((await login(user.username, fresh[0], from)).statusCode).toBe(200);
    expect((await auditActions(user.user_id)).map((a) => a.action)).toContain('auth.mfa_recovery_codes_regenerated');
  });

  it('turning it off needs a current code; afterwards the password alone signs in again', async () => {
    const user = await addUser(t, tenant, 'read-only');
    const { secret } = await enroll(user);
    const wrong = await call(t.app, user.token, { method: 'DELETE', url: '/api/v1/auth/mfa/totp', payload: { code: '12345' } });
    expect(wrong.statusCode).toBe(400);
    await call(t.app, user.token, { method: 'DELETE', url: '/api/v1/auth/mfa/totp', payload: { code: await codeAt(secret) }, expect: 204 });
    expect(await mfaStatus(user.token)).toMatchObject({ totp_enabled: false, recovery_codes_left: 0 });
    expect((await login(user.username, undefined, newAddress())).statusCode).toBe(200);
    const off = await call(t.app, user.token, { method: 'DELETE', url: '/api/v1/auth/mfa/totp', payload: { code: await codeAt(secret) } });
    expect(off.statusCode).toBe(409);

    const actions = await auditActions(user.user_id);
    expect(actions.find((a) => a.action === 'auth.mfa_enabled')?.details).toEqual({ method: 'totp', recovery_codes: 10 });
    expect(actions.find((a) => a.action === 'auth.mfa_disabled')?.details).toEqual({ method: 'totp', confirmed_with: 'totp' });
  });
});

describe('guessing codes', () => {
  it('wrong codes at login count as failed guesses: the sixth guess is 429, the right code too', async () => {
    const user = await addUser(t, tenant, 'read-only');
    const { secret } = await enroll(user);
    const current = await codeAt(secret);
    const wrong = current === '999999' ? '999998' : '999999';
    for (let i = 0; i < 5; i++) expect((await login(user.username, wrong, newAddress())).json().error.code).toBe('MFA_INVALID');
    const locked = await login(user.username, current, newAddress());
    expect(locked.statusCode).toBe(429);
    expect(locked.json().error.code).toBe('RATE_LIMITED');
  });

  it('wrong codes to turn it off count too (a stolen session cannot try them all)', async () => {
    const user = await addUser(t, tenant, 'read-only');
    const { secret } = await enroll(user);
    const current = await codeAt(secret);
    const wrong = current === '999999' ? '999998' : '999999';
    for (let i = 0; i < 5; i++) {
      expect((await call(t.app, user.token, { method: 'DELETE', url: '/api/v1/auth/mfa/totp', payload: { code: wrong } })).statusCode).toBe(400);
    }
    expect((await call(t.app, user.token, { method: 'DELETE', url: '/api/v1/auth/mfa/totp', payload: { code: current } })).statusCode).toBe(429);
  });
});

describe('a tenant that requires multi-factor sign-in', () => {
  it('holds password-only sessions of users without an authenticator to enrollment, until they sign in again with a code', async () => {
    const user = await addUser(t, tenant, 'security-analyst');
    const cookieUser = await addUser(t, tenant, 'read-only');
    const { key } = await createApiKey(t, tenant, { permissions: ['findings:read'] });
    const setting = `/api/v1/tenants/${tenant.id}/settings/mfa`;
    expect((await call(t.app, tenant.admin.token, { url: setting, expect: 200 })).json()).toEqual({ mfa_required: false });
    const refused = await call(t.app, tenant.users.auditor.token, { method: 'PUT', url: setting, payload: { mfa_required: true } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.message).toBe('missing permission tenant:update');
    // An admin signed in with a password alone would hold their own session: enroll and sign in with a code first.
    const selfLock = await call(t.app, tenant.admin.token, { method: 'PUT', url: setting, payload: { mfa_required: true } });
    expect(selfLock.statusCode).toBe(409);
    expect(selfLock.json().error.message).toMatch(/^this session was opened with a password alone/);
    const adminFactor = await enroll(tenant.admin);
    const adminLogin = await login(tenant.admin.username, await codeAt(adminFactor.secret), newAddress());
    adminToken = adminLogin.json().token;
    expect((await call(t.app, adminToken, { method: 'PUT', url: setting, payload: { mfa_required: true }, expect: 200 })).json()).toEqual({ mfa_required: true });
    const tenantLog = await call(t.app, adminToken, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=tenant.mfa_required_changed`, expect: 200 });
    expect(tenantLog.json().items.map((e: { details: unknown }) => e.details)).toEqual([{ previous: false, mfa_required: true }]);

    try {
      const findings = `/api/v1/tenants/${tenant.id}/findings`;
      // The session opened before the setting is held at once; so is a new login.
      for (const token of [user.token, (await login(user.username, undefined, newAddress())).json().token as string]) {
        const held = await call(t.app, token, { url: findings });
        expect(held.statusCode).toBe(403);
        expect(held.json().error).toMatchObject({
          code: 'MFA_ENROLLMENT_REQUIRED',
          message: 'your tenant requires multi-factor sign-in: enroll an authenticator first',
        });
        expect((await call(t.app, token, { url: '/api/v1/auth/me', expect: 200 })).json().mfa_enrollment_required).toBe(true);
      }
      const fresh = (await login(user.username, undefined, newAddress())).json();
      expect(fresh.mfa_enrollment_required).toBe(true);
      // Neither refreshing nor switching tenant gets out of it.
      const refreshed = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: fresh.refresh_token } });
      expect(refreshed.json().mfa_enrollment_required).toBe(true);
      expect((await call(t.app, refreshed.json().token, { url: findings })).json().error.code).toBe('MFA_ENROLLMENT_REQUIRED');
      const switched = await call(t.app, fresh.token, { method: 'POST', url: '/api/v1/auth/select-tenant', payload: { tenant_id: tenant.id } });
      expect(switched.json().error.code).toBe('MFA_ENROLLMENT_REQUIRED');
      // API keys are not sessions: unaffected.
      await call(t.app, key, { url: findings, expect: 200 });
      expect(await mfaStatus(fresh.token)).toMatchObject({ required_by_tenant: true, enrollment_required: true, totp_enabled: false });

      // Enrolling works from the held session; it stays held until the user signs in again with a code.
      const enrollment = (await call(t.app, fresh.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll', expect: 200 })).json();
      const confirmed = await call(t.app, fresh.token, {
        method: 'POST',
        url: '/api/v1/auth/mfa/totp/confirm',
        payload: { code: await codeAt(enrollment.secret) },
        expect: 200,
      });
      expect(confirmed.json().sign_in_again).toBe(true);
      expect((await call(t.app, fresh.token, { url: findings })).statusCode).toBe(403);
      t.clock.advance(STEP_MS);
      const full = await login(user.username, await codeAt(enrollment.secret), newAddress());
      expect(full.statusCode).toBe(200);
      expect(full.json().mfa_enrollment_required).toBe(false);
      await call(t.app, full.json().token, { url: findings, expect: 200 });
      expect((await call(t.app, full.json().token, { url: '/api/v1/auth/me', expect: 200 })).json().mfa_enrollment_required).toBe(false);

      // While the tenant requires it, it cannot be turned off.
      const off = await call(t.app, full.json().token, { method: 'DELETE', url: '/api/v1/auth/mfa/totp', payload: { code: await codeAt(enrollment.secret) } });
      expect(off.statusCode).toBe(403);
      expect(off.json().error.message).toBe('your tenant requires multi-factor sign-in: it cannot be turned off');

      // The console's cookie session is held the same way.
      const held = await cookieSignIn(cookieUser.username);
      expect(held.res.statusCode).toBe(200);
      expect(held.res.json().mfa_enrollment_required).toBe(true);
      expect((await withCookie(held.cookie!, findings)).json().error.code).toBe('MFA_ENROLLMENT_REQUIRED');
      expect((await withCookie(held.cookie!, '/api/v1/auth/me')).json().mfa_enrollment_required).toBe(true);

      // SSO sign-ins rely on the identity provider: never held, and an SSO-only account has no password to protect.
      const idp = makeKeyPair();
      const service = 'https://cg.test.example';
      await call(t.app, adminToken, {
        method: 'PUT',
        url: `/api/v1/tenants/${tenant.id}/sso`,
        payload: { provider: 'saml', service_url: service, metadata_xml: idpMetadata([idp]), default_role: 'read-only' },
        expect: 201,
      });
      const acs = await t.app.inject({
        method: 'POST',
        url: `/api/v1/auth/saml/${tenant.slug}/acs`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: acsForm(
          buildResponse(idp, {
            now: t.clock.now(),
            acs: `${service}/api/v1/auth/saml/${tenant.slug}/acs`,
            audience: `${service}/api/v1/auth/saml/${tenant.slug}/metadata`,
            nameId: 'mfa-sso-user',
          }),
        ),
      });
      expect(acs.statusCode, acs.body).toBe(200);
      expect(acs.json().mfa_enrollment_required).toBe(false);
      const ssoToken = acs.json().token as string;
      await call(t.app, ssoToken, { url: findings, expect: 200 });
      expect(await mfaStatus(ssoToken)).toMatchObject({ password_sign_in: false, required_by_tenant: true, enrollment_required: false });
      const ssoEnroll = await call(t.app, ssoToken, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll' });
      expect(ssoEnroll.statusCode).toBe(409);
      expect(ssoEnroll.json().error.message).toMatch(/^this account signs in through single sign-on/);

      // The admin's own earlier password-only session is held too; a held session can still sign out.
      expect((await call(t.app, tenant.admin.token, { url: findings })).json().error.code).toBe('MFA_ENROLLMENT_REQUIRED');
      await call(t.app, fresh.token, { method: 'POST', url: '/api/v1/auth/logout', expect: 204 });

      const actions = (await auditActions(user.user_id)).map((a) => a.action);
      expect(actions).toEqual(expect.arrayContaining(['auth.mfa_enabled', 'auth.login']));
    } finally {
      await call(t.app, adminToken, { method: 'PUT', url: setting, payload: { mfa_required: false }, expect: 200 });
    }
  });
});
