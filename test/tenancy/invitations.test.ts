import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { addUser, buildTenant, call, createApiKey, fresh, login, PASSWORD, unique, type Session, type TenantFixture } from '../harness/identity.js';

/**
 * A tenant admin adding an existing user of another tenant invites that user, who accepts or
 * declines after signing in; the invitation is answered the same whether or not the username exists.
 */
let t: TestApp;
let a: TenantFixture;
let b: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  a = await buildTenant(t);
  b = await buildTenant(t);
});
afterAll(() => t.close());

const invite = (tenant: TenantFixture, username: string, role = 'auditor') =>
  call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/users`, payload: { username, role } });
const mine = (session: Session, query = '') => call(t.app, session.token, { url: `/api/v1/account/invitations${query}`, expect: 200 });
const respond = (session: Session, id: string, action: 'accept' | 'decline') => call(t.app, session.token, { method: 'POST', url: `/api/v1/account/invitations/${id}/${action}` });
const selectB = (session: Session) => call(t.app, session.token, { method: 'POST', url: '/api/v1/auth/select-tenant', payload: { tenant_id: b.id } });
const auditOf = async (tenant: TenantFixture, action: string, targetId: string) =>
  (await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=${action}&target_id=${targetId}`, expect: 200 })).json().items;

/** A fresh user of tenant A, signed in. */
const userOfA = () => addUser(t, a, 'read-only');

describe('adding an existing user of another tenant', () => {
  it('does not link the user: 202 with a pending invitation, and the user is not a member until it agrees', async () => {
    const victim = await userOfA();
    const res = await invite(b, victim.username, 'tenant-admin');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({
      tenant_id: b.id,
      tenant_slug: b.slug,
      username: victim.username,
      role: 'tenant-admin',
      status: 'pending',
      invited_by: b.admin.username,
      responded_at: null,
    });
    expect((await selectB(await fresh(t, victim))).statusCode).toBe(403);
    const members = (await call(t.app, b.admin.token, { url: `/api/v1/tenants/${b.id}/users?per_page=500`, expect: 200 })).json().items;
    expect(members.map((m: { id: string }) => m.id)).not.toContain(victim.user_id);
    const [entry] = await auditOf(b, 'user.invited', res.json().id);
    expect(entry).toMatchObject({ actor_id: b.admin.user_id, details: { username: victim.username, role: 'tenant-admin', expires_at: res.json().expires_at } });
  });

  it('answers the same for a username that does not exist: same status, same fields, same audit entry', async () => {
    const victim = await userOfA();
    const existing = await invite(b, victim.username);
    const ghost = unique('nobody');
    const missing = await invite(b, ghost);
    expect(missing.statusCode).toBe(existing.statusCode);
    expect(Object.keys(missing.json()).sort()).toEqual(Object.keys(existing.json()).sort());
    const comparable = (body: Record<string, unknown>) => ({ ...body, id: 'id', username: 'name' });
    expect(comparable(missing.json())).toEqual(comparable(existing.json()));
    const [x] = await auditOf(b, 'user.invited', existing.json().id);
    const [y] = await auditOf(b, 'user.invited', missing.json().id);
    expect(Object.keys(y.details).sort()).toEqual(Object.keys(x.details).sort());
    // Both are listed alike for the tenant's admins.
    const listed = (await call(t.app, b.admin.token, { url: `/api/v1/tenants/${b.id}/invitations?per_page=500`, expect: 200 })).json().items;
    const both = listed.filter((i: { id: string }) => [existing.json().id, missing.json().id].includes(i.id));
    expect(both.map((i: { status: string }) => i.status)).toEqual(['pending', 'pending']);
  });

  it('an invitation to a name nobody had cannot be accepted by whoever takes the name later; it just expires', async () => {
    const name = unique('later');
    const res = await invite(b, name);
    expect(res.statusCode).toBe(202);
    const newcomer = await addUser(t, a, 'read-only', name);
    expect((await mine(newcomer)).json().total).toBe(0);
    expect((await respond(newcomer, res.json().id, 'accept')).statusCode).toBe(404);
  });

  it('is listed for the user after sign-in (paged), who accepts it: then a member with the role, audit-logged', async () => {
    const victim = await userOfA();
    const first = (await invite(b, victim.username, 'security-analyst')).json();
    const other = await buildTenant(t);
    await invite(other, victim.username, 'read-only');
    const session = await login(t.app, victim.username, PASSWORD);
    const page = (await mine(session, '?per_page=1')).json();
    expect(page).toMatchObject({ total: 2, per_page: 1, total_pages: 2, page: 1 });
    const all = (await mine(session)).json().items;
    expect(all.map((i: { tenant_id: string }) => i.tenant_id).sort()).toEqual([b.id, other.id].sort());
    expect(all.find((i: { id: string }) => i.id === first.id)).toMatchObject({ tenant_name: expect.any(String), role: 'security-analyst', status: 'pending' });

    const accepted = await respond(session, first.id, 'accept');
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json()).toMatchObject({ id: first.id, status: 'accepted', responded_at: expect.any(String) });
    const there = await selectB(session);
    expect(there.statusCode).toBe(200);
    expect(there.json().role).toBe('security-analyst');
    expect(await auditOf(b, 'user.invitation_accepted', first.id)).toEqual([
      expect.objectContaining({ actor_id: victim.user_id, details: expect.objectContaining({ role: 'security-analyst' }) }),
    ]);
    // Answered: not listed any more, and not answerable again.
    expect((await mine(session)).json().items.map((i: { id: string }) => i.id)).not.toContain(first.id);
    const again = await respond(session, first.id, 'decline');
    expect(again.statusCode).toBe(409);
    expect(again.json().error.message).toBe('invitation already accepted');
  });

  it('the user may decline: no membership, audit-logged, and it cannot be accepted afterwards', async () => {
    const victim = await userOfA();
    const invitation = (await invite(b, victim.username)).json();
    const declined = await respond(victim, invitation.id, 'decline');
    expect(declined.statusCode).toBe(200);
    expect(declined.json().status).toBe('declined');
    expect((await selectB(victim)).statusCode).toBe(403);
    expect(await auditOf(b, 'user.invitation_declined', invitation.id)).toHaveLength(1);
    const late = await respond(victim, invitation.id, 'accept');
    expect(late.statusCode).toBe(409);
    expect(late.json().error.message).toBe('invitation already declined');
  });

  it("nobody else can answer a user's invitation (404), not even the inviting tenant's admin", async () => {
    const victim = await userOfA();
    const invitation = (await invite(b, victim.username)).json();
    for (const session of [a.users.auditor, b.admin]) {
      const res = await respond(await fresh(t, session), invitation.id, 'accept');
      expect(res.statusCode).toBe(404);
      expect(res.json().error.message).toBe('invitation not found');
    }
  });

  it("the tenant's admin may withdraw an open invitation (204, audit-logged); then it cannot be accepted", async () => {
    const victim = await userOfA();
    const invitation = (await invite(b, victim.username)).json();
    await call(t.app, b.admin.token, { method: 'DELETE', url: `/api/v1/tenants/${b.id}/invitations/${invitation.id}`, expect: 204 });
    expect(await auditOf(b, 'user.invitation_revoked', invitation.id)).toHaveLength(1);
    const again = await call(t.app, b.admin.token, { method: 'DELETE', url: `/api/v1/tenants/${b.id}/invitations/${invitation.id}` });
    expect(again.statusCode).toBe(409);
    expect((await respond(victim, invitation.id, 'accept')).statusCode).toBe(409);
    // Another tenant's admin neither sees nor withdraws it.
    const foreign = await call(t.app, a.admin.token, { method: 'DELETE', url: `/api/v1/tenants/${a.id}/invitations/${invitation.id}` });
    expect(foreign.statusCode).toBe(404);
  });

  it('API keys cannot answer or list invitations (403): they are for the invited user', async () => {
    const { key } = await createApiKey(t, a, { permissions: ['admin:*'] });
    const res = await call(t.app, key, { url: '/api/v1/account/invitations' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('invitations are answered by their user: use a user token, not an API key');
  });

  it('the role rules apply to invitations too: no role above your own', async () => {
    const victim = await userOfA();
    const res = await invite(b, victim.username, 'system-admin');
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('cannot assign a role higher than your own');
  });

  it('expires after CONTROLGRAPH_INVITATION_TTL (default 7d): no longer listed, 410 on accept, shown as expired to the tenant', async () => {
    expect(loadConfig({}).invitationTtlMs).toBe(7 * 86_400_000);
    expect(loadConfig({ CONTROLGRAPH_INVITATION_TTL: '2d' }).invitationTtlMs).toBe(2 * 86_400_000);
    const victim = await userOfA();
    const invitation = (await invite(b, victim.username)).json();
    expect(new Date(invitation.expires_at).getTime() - new Date(invitation.created_at).getTime()).toBe(7 * 86_400_000);
    t.clock.advance(7 * 86_400_000 + 1000);
    const session = await fresh(t, victim);
    expect((await mine(session)).json().items.map((i: { id: string }) => i.id)).not.toContain(invitation.id);
    const res = await respond(session, invitation.id, 'accept');
    expect(res.statusCode).toBe(410);
    expect(res.json().error.message).toBe('invitation expired: ask the tenant admin to invite you again');
    // Tokens live an hour of the manual clock: this test runs last.
    b = { ...b, admin: await fresh(t, b.admin) };
    const listed = (await call(t.app, b.admin.token, { url: `/api/v1/tenants/${b.id}/invitations?per_page=500`, expect: 200 })).json().items;
    expect(listed.find((i: { id: string }) => i.id === invitation.id).status).toBe('expired');
    // Inviting again renews it (the same invitation).
    const renewed = await invite(b, victim.username);
    expect(renewed.json()).toMatchObject({ id: invitation.id, status: 'pending' });
    expect((await respond(session, invitation.id, 'accept')).statusCode).toBe(200);
  });
});
