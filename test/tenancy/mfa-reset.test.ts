import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_USERNAME, createTestApp, type TestApp } from '../harness/app.js';
import { addUser, buildTenant, call, createApiKey, loginAdmin, PASSWORD, selectTenant, type Session, type TenantFixture } from '../harness/identity.js';

/**
 * An administrator resets a member's multi-factor sign-in (DELETE /tenants/{id}/users/{id}/mfa): the
 * authenticator and recovery codes go, the next sign-in takes the password alone, the reset is in the
 * audit log, and every refusal (API key, own account, system-admin, another tenant's user, nothing to
 * reset, missing permission) has its status and message.
 */
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
});
afterAll(() => t.close());

const codeAt = (secret: string) => generate({ secret, epoch: Math.floor(t.clock.now().getTime() / 1000) });
const resetUrl = (tenantId: string, userId: string) => `/api/v1/tenants/${tenantId}/users/${userId}/mfa`;
const reset = (token: string | null, tenantId: string, userId: string) => call(t.app, token, { method: 'DELETE', url: resetUrl(tenantId, userId) });
const login = (username: string, otp?: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { username, password: PASSWORD, ...(otp ? { otp } : {}) } });
const mfaStatus = async (token: string) => (await call(t.app, token, { url: '/api/v1/auth/mfa', expect: 200 })).json();

/** Enrolls and confirms an authenticator for the user; returns its secret and recovery codes. */
async function enroll(session: Session, confirm = true): Promise<{ secret: string; recoveryCodes: string[] }> {
  const { secret } = (await call(t.app, session.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/enroll', expect: 200 })).json();
  if (!confirm) return { secret, recoveryCodes: [] };
  const confirmed = await call(t.app, session.token, { method: 'POST', url: '/api/v1/auth/mfa/totp/confirm', payload: { code: await codeAt(secret) }, expect: 200 });
  t.clock.advance(30_000);
  return { secret, recoveryCodes: confirmed.json().recovery_codes };
}

async function resetEntries(userId: string) {
  const res = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=user.mfa_reset&target_id=${userId}`, expect: 200 });
  return res.json().items as Array<{ action: string; actor_name?: string; details: Record<string, unknown> }>;
}

describe('admin reset of a member’s multi-factor sign-in', () => {
  it('204: removes the authenticator and the recovery codes; the member signs in with the password alone; audit-logged', async () => {
    const member = await addUser(t, tenant, 'security-analyst');
    const { recoveryCodes } = await enroll(member);
    expect((await login(member.username)).json().error.code).toBe('MFA_REQUIRED');

    const res = await reset(tenant.admin.token, tenant.id, member.user_id);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    const signedIn = await login(member.username);
    expect(signedIn.statusCode).toBe(200);
    expect(await mfaStatus(signedIn.json().token)).toMatchObject({ totp_enabled: false, enrollment_pending: false, recovery_codes_left: 0 });
    // The old recovery codes are gone with the authenticator: after enrolling again they do not sign in.
    const again = await enroll(signedIn.json());
    expect((await login(member.username, recoveryCodes[0])).json().error.code).toBe('MFA_INVALID');
    expect((await login(member.username, again.recoveryCodes[0])).statusCode).toBe(200);

    const [entry] = await resetEntries(member.user_id);
    expect(entry).toMatchObject({
      action: 'user.mfa_reset',
      details: { username: member.username, authenticator: 'confirmed', recovery_codes_removed: 10 },
    });
  });

  it('204 for an enrollment still pending (nothing confirmed yet), logged as such', async () => {
    const member = await addUser(t, tenant, 'auditor');
    await enroll(member, false);
    expect((await reset(tenant.admin.token, tenant.id, member.user_id)).statusCode).toBe(204);
    expect(await mfaStatus(member.token)).toMatchObject({ totp_enabled: false, enrollment_pending: false });
    expect((await resetEntries(member.user_id))[0]!.details).toMatchObject({ authenticator: 'pending', recovery_codes_removed: 0 });
  });

  it('409 when the member has no second factor (nothing is logged)', async () => {
    const member = await addUser(t, tenant, 'read-only');
    const res = await reset(tenant.admin.token, tenant.id, member.user_id);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({ code: 'CONFLICT', message: `${member.username} has no multi-factor sign-in to reset` });
    expect(await resetEntries(member.user_id)).toEqual([]);
  });

  it("404 for another tenant's member (whose authenticator stays) and for an unknown user", async () => {
    const stranger = await addUser(t, other, 'read-only');
    await enroll(stranger);
    const res = await reset(tenant.admin.token, tenant.id, stranger.user_id);
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'user not found in this tenant' });
    expect(await mfaStatus(stranger.token)).toMatchObject({ totp_enabled: true, recovery_codes_left: 10 });
    expect((await reset(tenant.admin.token, tenant.id, '00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
  });

  it('403 on the other tenant’s path (no access to that tenant)', async () => {
    const stranger = await addUser(t, other, 'auditor');
    await enroll(stranger);
    const res = await reset(tenant.admin.token, other.id, stranger.user_id);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('no access to this tenant');
    expect(await mfaStatus(stranger.token)).toMatchObject({ totp_enabled: true });
  });

  it('403 for your own account: turning it off takes a code', async () => {
    const admin = await addUser(t, tenant, 'tenant-admin');
    await enroll(admin);
    const res = await reset(admin.token, tenant.id, admin.user_id);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('cannot reset your own multi-factor sign-in: turn it off with a current code (DELETE /api/v1/auth/mfa/totp)');
    expect(await mfaStatus(admin.token)).toMatchObject({ totp_enabled: true });
  });

  it('403 for an API key, even with admin:*', async () => {
    const member = await addUser(t, tenant, 'read-only');
    await enroll(member);
    const { key } = await createApiKey(t, tenant, { permissions: ['admin:*'] });
    const res = await reset(key, tenant.id, member.user_id);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe("resetting a user's multi-factor sign-in needs a signed-in administrator, not an API key");
    expect(await mfaStatus(member.token)).toMatchObject({ totp_enabled: true });
  });

  it("403 for a system-admin's membership, which only a system-admin changes", async () => {
    const members = (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/users?per_page=100`, expect: 200 })).json().items as Array<{
      id: string;
      username: string;
    }>;
    const operator = members.find((user) => user.username === ADMIN_USERNAME)!;
    const res = await reset(tenant.admin.token, tenant.id, operator.id);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe("cannot change a system-admin's membership: only a system-admin can");
  });

  it('403 for a member who also belongs to another tenant (the factor guards both), unless a system-admin resets it', async () => {
    const member = await addUser(t, tenant, 'read-only');
    await enroll(member);
    // The other tenant invites the same account, and the user accepts: one account, two memberships.
    await call(t.app, other.admin.token, { method: 'POST', url: `/api/v1/tenants/${other.id}/users`, payload: { username: member.username, role: 'read-only' }, expect: 202 });
    const [invitation] = (await call(t.app, member.token, { url: '/api/v1/account/invitations', expect: 200 })).json().items as Array<{ id: string }>;
    await call(t.app, member.token, { method: 'POST', url: `/api/v1/account/invitations/${invitation!.id}/accept`, expect: 200 });

    const refused = await reset(tenant.admin.token, tenant.id, member.user_id);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toMatchObject({
      code: 'FORBIDDEN',
      message: `${member.username} also belongs to other tenants: only a system-admin can reset their multi-factor sign-in`,
    });
    expect(await mfaStatus(member.token)).toMatchObject({ totp_enabled: true, recovery_codes_left: 10 });
    expect(await resetEntries(member.user_id)).toEqual([]);

    const operator = await selectTenant(t.app, await loginAdmin(t), tenant.id);
    expect((await reset(operator.token, tenant.id, member.user_id)).statusCode).toBe(204);
    expect(await mfaStatus(member.token)).toMatchObject({ totp_enabled: false });
  });

  it('403 without roles:manage, 401 without credentials, 400 for a malformed user id', async () => {
    const member = await addUser(t, tenant, 'read-only');
    await enroll(member);
    const analyst = await reset(tenant.users['security-analyst'].token, tenant.id, member.user_id);
    expect(analyst.statusCode).toBe(403);
    expect(analyst.json().error.message).toBe('missing permission roles:manage');
    const anonymous = await reset(null, tenant.id, member.user_id);
    expect(anonymous.statusCode).toBe(401);
    expect((await reset(tenant.admin.token, tenant.id, 'not-a-uuid')).statusCode).toBe(400);
    expect(await mfaStatus(member.token)).toMatchObject({ totp_enabled: true });
  });
});
