import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, fresh, type TenantFixture } from '../harness/identity.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
beforeAll(async () => {
  // The inject client is 127.0.0.1: trust it as a proxy so X-Forwarded-For counts.
  t = await createTestApp({ env: { CONTROLGRAPH_TRUSTED_PROXIES: '127.0.0.1' } });
  tenant = await buildTenant(t);
  other = await buildTenant(t);
});
afterAll(() => t.close());

describe('POST /api-keys', () => {
  it('returns the key once (cg_ prefix) with id, name, created_at, expires_at; listings never show it', async () => {
    const res = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: '/api/v1/api-keys',
      payload: { name: 'ci', tenants: [tenant.id], permissions: ['nodes:read', 'findings:read'], expires_at: '2027-01-01T00:00:00Z' },
    });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created.key).toMatch(/^cg_[0-9A-Za-z]{40}$/);
    expect(created).toMatchObject({ name: 'ci', expires_at: '2027-01-01T00:00:00.000Z', tenants: [tenant.id], prefix: created.key.slice(0, 10) });
    const list = await call(t.app, tenant.admin.token, { url: '/api/v1/api-keys', expect: 200 });
    const listed = list.json().items.find((k: { id: string }) => k.id === created.id);
    expect(listed).toBeDefined();
    expect(JSON.stringify(list.json())).not.toContain(created.key);
    const stored = await t.deps.database.db.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(created.key);
    const me = await call(t.app, created.key, { url: '/api/v1/auth/me', expect: 200 });
    expect(me.json()).toMatchObject({ auth_type: 'api_key', api_key_id: created.id, tenant_id: tenant.id, role: null });
    expect(me.json().permissions).toEqual(['findings:read', 'nodes:read', 'rules:read']);
  });

  it('maps key permissions onto role permissions (findings:write grants audit:run, admin:* a tenant-admin set)', async () => {
    const writer = await createApiKey(t, tenant, { permissions: ['findings:write'] });
    const perms = (await call(t.app, writer.key, { url: '/api/v1/auth/me', expect: 200 })).json().permissions;
    expect(perms).toEqual(['audit:run', 'findings:write']);
    const admin = await createApiKey(t, tenant, { permissions: ['admin:*'] });
    const adminPerms = (await call(t.app, admin.key, { url: '/api/v1/auth/me', expect: 200 })).json().permissions;
    expect(adminPerms).toContain('roles:manage');
    expect(adminPerms).not.toContain('platform:admin');
  });

  it('refuses unknown permissions (400), permissions beyond the creator (403), tenants the creator cannot manage (403)', async () => {
    const unknown = await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/api-keys', payload: { name: 'x', permissions: ['root:all'] } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.message).toBe('unknown permission: root:all');
    const foreign = await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/api-keys', payload: { name: 'x', tenants: [other.id], permissions: ['nodes:read'] } });
    expect(foreign.statusCode).toBe(403);
    const analyst = await call(t.app, tenant.users['security-analyst'].token, { method: 'POST', url: '/api/v1/api-keys', payload: { name: 'x', permissions: ['nodes:read'] } });
    expect(analyst.statusCode).toBe(403);
    const past = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: '/api/v1/api-keys',
      payload: { name: 'x', permissions: ['nodes:read'], expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(past.statusCode).toBe(400);
  });

  it('a key for several tenants works in each of them, and nowhere else', async () => {
    const system = await (await import('../harness/identity.js')).loginAdmin(t);
    const res = await call(t.app, system.token, {
      method: 'POST',
      url: '/api/v1/api-keys',
      payload: { name: 'multi', tenants: [tenant.id, other.id], permissions: ['nodes:read', 'admin:*'] },
      expect: 201,
    });
    const key = res.json().key;
    expect((await call(t.app, key, { url: `/api/v1/tenants/${tenant.id}/users` })).statusCode).toBe(200);
    expect((await call(t.app, key, { url: `/api/v1/tenants/${other.id}/users` })).statusCode).toBe(200);
    const third = await buildTenant(t);
    expect((await call(t.app, key, { url: `/api/v1/tenants/${third.id}/users` })).statusCode).toBe(403);
  });
});

describe('API key authentication', () => {
  it('403 when the key lacks the permission', async () => {
    const { key } = await createApiKey(t, tenant, { permissions: ['nodes:read'] });
    const res = await call(t.app, key, { url: `/api/v1/tenants/${tenant.id}/users` });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('missing permission tenant:read');
  });

  it('401 for an expired key', async () => {
    const admin = await fresh(t, tenant.admin);
    const res = await call(t.app, admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/api-keys`,
      payload: { name: 'short', permissions: ['tenant:read'], expires_at: new Date(t.clock.now().getTime() + 60_000).toISOString() },
      expect: 201,
    });
    const key = res.json().key;
    expect((await call(t.app, key, { url: '/api/v1/auth/me' })).statusCode).toBe(200);
    t.clock.advance(61_000);
    const expired = await call(t.app, key, { url: '/api/v1/auth/me' });
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.message).toBe('API key expired');
  });

  it('401 for a revoked key; revocation is audit-logged', async () => {
    const admin = await fresh(t, tenant.admin);
    const { key, id } = await createApiKey(t, { ...tenant, admin }, { permissions: ['tenant:read'] });
    const revoked = await call(t.app, admin.token, { method: 'DELETE', url: `/api/v1/api-keys/${id}` });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked_at).not.toBeNull();
    const res = await call(t.app, key, { url: '/api/v1/auth/me' });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toBe('API key revoked');
    const log = await call(t.app, admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=api_key.*&target_id=${id}`, expect: 200 });
    expect(
      log
        .json()
        .items.map((e: { action: string }) => e.action)
        .sort(),
    ).toEqual(['api_key.created', 'api_key.revoked']);
  });

  it('401 for an unknown key; 404 when revoking a key of another tenant', async () => {
    expect((await call(t.app, 'cg_' + 'x'.repeat(40), { url: '/api/v1/auth/me' })).statusCode).toBe(401);
    const admin = await fresh(t, tenant.admin);
    const foreignKey = await createApiKey(t, { ...other, admin: await fresh(t, other.admin) }, { permissions: ['tenant:read'] });
    expect((await call(t.app, admin.token, { method: 'DELETE', url: `/api/v1/api-keys/${foreignKey.id}` })).statusCode).toBe(404);
  });

  it('allowed_ips: addresses and CIDR ranges (IPv4 and IPv6); other addresses get 403', async () => {
    const admin = await fresh(t, tenant.admin);
    const { key } = await createApiKey(t, { ...tenant, admin }, { permissions: ['tenant:read'], allowed_ips: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'] });
    const from = (ip: string) => call(t.app, key, { url: '/api/v1/auth/me', headers: { 'x-forwarded-for': ip } });
    expect((await from('203.0.113.9')).statusCode).toBe(200);
    expect((await from('198.51.100.7')).statusCode).toBe(200);
    expect((await from('2001:db8:1::5')).statusCode).toBe(200);
    const refused = await from('198.51.100.8');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.message).toBe('API key not allowed from this address');
    const bad = await call(t.app, admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/api-keys`,
      payload: { name: 'b', permissions: ['tenant:read'], allowed_ips: ['10.0.0.0/33'] },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toBe('allowed_ips: "10.0.0.0/33" is not an IP address or CIDR range');
  });

  it('ignores X-Forwarded-For from a client that is not a trusted proxy', async () => {
    const strict = await createTestApp();
    try {
      const { buildTenant: build, createApiKey: create } = await import('../harness/identity.js');
      const own = await build(strict);
      const { key } = await create(strict, own, { permissions: ['tenant:read'], allowed_ips: ['203.0.113.0/24'] });
      const res = await strict.app.inject({ url: '/api/v1/auth/me', headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': '203.0.113.9' } });
      expect(res.statusCode).toBe(403);
      const direct = await strict.app.inject({ url: '/api/v1/auth/me', remoteAddress: '203.0.113.10', headers: { authorization: `Bearer ${key}` } });
      expect(direct.statusCode).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('binds a key to a workspace of its tenant', async () => {
    const admin = await fresh(t, tenant.admin);
    const ws = await call(t.app, admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'agents' }, expect: 201 });
    const { key } = await createApiKey(t, { ...tenant, admin }, { permissions: ['agents:write', 'tenant:read'], workspace_id: ws.json().id });
    expect((await call(t.app, key, { url: '/api/v1/auth/me', expect: 200 })).json().workspace_id).toBe(ws.json().id);
    const foreign = await call(t.app, admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/api-keys`,
      payload: { name: 'x', permissions: ['tenant:read'], workspace_id: other.defaultWorkspaceId },
    });
    expect(foreign.statusCode).toBe(400);
  });
});
