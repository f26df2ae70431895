import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { addUser, buildTenant, call, login, loginAdmin, PASSWORD, unique, type TenantFixture } from '../harness/identity.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
});
afterAll(() => t.close());

const roleUrl = (userId: string, tenantId = tenant.id) => `/api/v1/tenants/${tenantId}/users/${userId}/role`;

describe('GET /roles', () => {
  it('is an array of the five roles with levels; read-only and auditor exactly as the spec lists', async () => {
    const res = await call(t.app, tenant.users['read-only'].token, { url: `/api/v1/tenants/${tenant.id}/roles`, expect: 200 });
    const roles = res.json();
    expect(Array.isArray(roles)).toBe(true);
    expect(roles.map((r: { role: string; level: number }) => [r.role, r.level])).toEqual([
      ['read-only', 1],
      ['auditor', 2],
      ['security-analyst', 3],
      ['tenant-admin', 4],
      ['system-admin', 5],
    ]);
    const readOnly = ['tenant:read', 'nodes:read', 'jobs:read', 'findings:read', 'evidence:read', 'poam:read', 'questionnaire:read', 'assessment:read', 'rules:read'];
    expect([...roles[0].permissions].sort()).toEqual([...readOnly].sort());
    expect([...roles[1].permissions].sort()).toEqual([...readOnly, 'logs:read', 'conmon:read', 'attestation_evidence:read'].sort());
    for (let i = 1; i < roles.length; i++) {
      for (const p of roles[i - 1].permissions) expect(roles[i].permissions).toContain(p);
    }
    for (const p of ['findings:write', 'audit:run', 'rules:write', 'poam:write', 'questionnaire:write', 'assessment:review']) expect(roles[2].permissions).toContain(p);
    for (const p of ['tenant:update', 'roles:manage']) expect(roles[3].permissions).toContain(p);
  });
});

describe('tenant users', () => {
  it('creates a user (201 {id, username, role, created_at}) and lists users paged', async () => {
    const username = unique('new');
    const res = await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/users`, payload: { username, password: PASSWORD, role: 'auditor' } });
    expect(res.statusCode).toBe(201);
    expect(Object.keys(res.json()).sort()).toEqual(['created_at', 'id', 'role', 'username']);
    const list = await call(t.app, tenant.users['read-only'].token, { url: `/api/v1/tenants/${tenant.id}/users?per_page=2&page=2`, expect: 200 });
    expect(list.json()).toMatchObject({ page: 2, per_page: 2 });
    expect(list.json().total).toBeGreaterThanOrEqual(5);
  });

  it('refuses a short password with 400 whether or not the username exists; a system-admin must give a password for a new user', async () => {
    for (const username of [unique('u'), other.users.auditor.username]) {
      const short = await call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/users`, payload: { username, password: 'short', role: 'auditor' } });
      expect(short.statusCode).toBe(400);
      expect(short.json().error.message).toBe('password must be at least 12 characters');
    }
    const system = await loginAdmin(t);
    const none = await call(t.app, system.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/users`, payload: { username: unique('u'), role: 'auditor' } });
    expect(none.statusCode).toBe(400);
    expect(none.json().error.message).toBe('password is required');
  });

  it('a system-admin links an existing username into another tenant with its own role; the password stays', async () => {
    const system = await loginAdmin(t);
    const username = tenant.users.auditor.username;
    const res = await call(t.app, system.token, { method: 'POST', url: `/api/v1/tenants/${other.id}/users`, payload: { username, role: 'security-analyst' } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ id: tenant.users.auditor.user_id, role: 'security-analyst' });
    const session = await login(t.app, username, PASSWORD);
    const there = await call(t.app, session.token, { method: 'POST', url: '/api/v1/auth/select-tenant', payload: { tenant_id: other.id }, expect: 200 });
    expect(there.json().role).toBe('security-analyst');
    expect(session.role).toBe('auditor');
    const duplicate = await call(t.app, other.admin.token, { method: 'POST', url: `/api/v1/tenants/${other.id}/users`, payload: { username, role: 'auditor' } });
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json().error.message).toBe(`user "${username}" already belongs to this tenant`);
  });

  it('a tenant admin adding a taken username with a password invites its user (202) and links nobody', async () => {
    const username = other.users['read-only'].username;
    const res = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/users`,
      payload: { username, password: 'another-password-entirely', role: 'auditor' },
    });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ username, role: 'auditor', status: 'pending' });
    // The other tenant's user is not linked, and keeps its own password.
    const session = await login(t.app, username, PASSWORD);
    expect((await call(t.app, session.token, { method: 'POST', url: '/api/v1/auth/select-tenant', payload: { tenant_id: tenant.id } })).statusCode).toBe(403);
    const mine = await call(t.app, session.token, { url: '/api/v1/account/invitations', expect: 200 });
    expect(mine.json().items.map((i: { tenant_id: string }) => i.tenant_id)).toContain(tenant.id);
  });

  it('applies the role rules to creation: no role above your own', async () => {
    const res = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/users`,
      payload: { username: unique('u'), password: PASSWORD, role: 'system-admin' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('cannot assign a role higher than your own');
  });

  it('removes a membership (204), not the user', async () => {
    const victim = await addUser(t, tenant, 'read-only');
    expect((await call(t.app, tenant.admin.token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/users/${victim.user_id}` })).statusCode).toBe(204);
    expect((await call(t.app, tenant.admin.token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/users/${victim.user_id}` })).statusCode).toBe(404);
    expect(await t.deps.database.db.selectFrom('users').select('id').where('id', '=', victim.user_id).executeTakeFirst()).toBeDefined();
  });
});

describe("a system-admin's memberships", () => {
  // The bootstrap system-admin created `tenant` and holds a tenant-admin membership in it: the same
  // level as the tenant's own admin, whom the level rule alone would let change or remove it.
  const systemAdminId = async () => (await loginAdmin(t)).user_id;

  it("a tenant admin cannot change a system-admin's role in the tenant (403)", async () => {
    const adminId = await systemAdminId();
    const res = await call(t.app, tenant.admin.token, { method: 'PUT', url: roleUrl(adminId), payload: { role: 'read-only' } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe("cannot change a system-admin's membership: only a system-admin can");
    const users = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/users?per_page=500`, expect: 200 });
    expect(users.json().items.find((u: { id: string }) => u.id === adminId)).toMatchObject({ role: 'tenant-admin' });
  });

  it("a tenant admin cannot remove a system-admin's membership (403); it stays", async () => {
    const adminId = await systemAdminId();
    const res = await call(t.app, tenant.admin.token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/users/${adminId}` });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe("cannot change a system-admin's membership: only a system-admin can");
    const users = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/users?per_page=500`, expect: 200 });
    expect(users.json().items.find((u: { id: string }) => u.id === adminId)).toMatchObject({ role: 'tenant-admin' });
  });

  it("a system-admin changes a system-admin's membership", async () => {
    const system = await loginAdmin(t);
    const peer = await addUser(t, tenant, 'read-only');
    await call(t.app, system.token, { method: 'PUT', url: roleUrl(peer.user_id), payload: { role: 'system-admin' }, expect: 200 });
    await call(t.app, system.token, { method: 'PUT', url: roleUrl(peer.user_id), payload: { role: 'auditor' }, expect: 200 });
    await call(t.app, system.token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/users/${peer.user_id}`, expect: 204 });
  });
});

describe('PUT /users/{userID}/role', () => {
  it('changes the role (200) and audit-logs previous and new role', async () => {
    const target = await addUser(t, tenant, 'read-only');
    const res = await call(t.app, tenant.admin.token, { method: 'PUT', url: roleUrl(target.user_id), payload: { role: 'security-analyst' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: target.user_id, role: 'security-analyst', previous_role: 'read-only' });
    const log = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=user.role_changed&target_id=${target.user_id}`, expect: 200 });
    expect(log.json().items[0]).toMatchObject({
      actor_id: tenant.admin.user_id,
      details: { previous_role: 'read-only', new_role: 'security-analyst', username: target.username },
    });
    // The new role applies to the user's existing token at once.
    expect((await call(t.app, target.token, { url: '/api/v1/auth/me', expect: 200 })).json().role).toBe('security-analyst');
  });

  it('rule 1: cannot change your own role', async () => {
    const res = await call(t.app, tenant.admin.token, { method: 'PUT', url: roleUrl(tenant.admin.user_id), payload: { role: 'auditor' } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toEqual({ code: 'FORBIDDEN', message: 'cannot change your own role', details: null });
  });

  it('rule 2: cannot assign a role higher than your own (a tenant admin cannot grant system-admin)', async () => {
    const res = await call(t.app, tenant.admin.token, { method: 'PUT', url: roleUrl(tenant.users.auditor.user_id), payload: { role: 'system-admin' } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('cannot assign a role higher than your own');
  });

  it('rule 3: cannot modify a user with higher role than your own', async () => {
    const system = await loginAdmin(t);
    const otherAdmin = await addUser(t, tenant, 'tenant-admin');
    await call(t.app, system.token, { method: 'PUT', url: roleUrl(otherAdmin.user_id), payload: { role: 'tenant-admin' }, expect: 200 });
    // A security-analyst with roles:manage does not exist; use a tenant-admin acting on a system-admin member.
    await call(t.app, system.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/users`,
      payload: { username: unique('sysadm'), password: PASSWORD, role: 'system-admin' },
      expect: 201,
    });
    const users = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/users?per_page=500`, expect: 200 });
    const sys = users.json().items.find((u: { role: string }) => u.role === 'system-admin');
    const res = await call(t.app, tenant.admin.token, { method: 'PUT', url: roleUrl(sys.id), payload: { role: 'auditor' } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('cannot modify a user with higher role than your own');
  });

  it('rule 4: the target must belong to the tenant', async () => {
    const res = await call(t.app, tenant.admin.token, { method: 'PUT', url: roleUrl(other.users['read-only'].user_id), payload: { role: 'auditor' } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('user does not belong to this tenant');
  });

  it('400 for an unknown role and for an empty or missing role', async () => {
    const unknownRole = await call(t.app, tenant.admin.token, { method: 'PUT', url: roleUrl(tenant.users.auditor.user_id), payload: { role: 'operator' } });
    expect(unknownRole.statusCode).toBe(400);
    expect(unknownRole.json().error.message).toBe('invalid role: must be one of read-only, auditor, security-analyst, tenant-admin, system-admin');
    for (const payload of [{ role: '' }, {}, { role: null }]) {
      const empty = await call(t.app, tenant.admin.token, { method: 'PUT', url: roleUrl(tenant.users.auditor.user_id), payload });
      expect(empty.statusCode).toBe(400);
      expect(empty.json().error.message).toBe('role is required');
    }
  });

  it('403 without roles:manage', async () => {
    const res = await call(t.app, tenant.users['security-analyst'].token, { method: 'PUT', url: roleUrl(tenant.users.auditor.user_id), payload: { role: 'read-only' } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('missing permission roles:manage');
  });

  it('a system-admin may grant system-admin, which then spans tenants', async () => {
    const system = await loginAdmin(t);
    const promoted = await addUser(t, tenant, 'read-only');
    await call(t.app, system.token, { method: 'PUT', url: roleUrl(promoted.user_id), payload: { role: 'system-admin' }, expect: 200 });
    const session = await login(t.app, promoted.username, PASSWORD);
    expect((await call(t.app, session.token, { url: `/api/v1/tenants/${other.id}/users` })).statusCode).toBe(200);
  });
});
