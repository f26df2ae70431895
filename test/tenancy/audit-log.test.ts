import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { addUser, buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';

let t: TestApp;
let tenant: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  t.clock.advance(1000);
  const target = await addUser(t, tenant, 'read-only');
  t.clock.advance(1000);
  await call(t.app, tenant.admin.token, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}/users/${target.user_id}/role`, payload: { role: 'auditor' }, expect: 200 });
  t.clock.advance(1000);
  await createApiKey(t, tenant, { permissions: ['nodes:read'] });
});
afterAll(() => t.close());

const logs = (query: string, token = tenant.users.auditor.token) => call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/audit-logs${query}` });

describe('GET /audit-logs', () => {
  it('lists newest first, paged, with who did what', async () => {
    const res = await logs('?per_page=2');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ page: 1, per_page: 2 });
    expect(body.total).toBeGreaterThan(5);
    expect(body.items[0]).toMatchObject({
      action: 'api_key.created',
      actor_type: 'user',
      actor_id: tenant.admin.user_id,
      actor_name: tenant.admin.username,
      ip: '127.0.0.1',
      request_id: expect.any(String),
    });
    expect(body.items[1].action).toBe('user.role_changed');
  });

  it('filters by action (exact and prefix), actor, target and time', async () => {
    const exact = (await logs('?action=user.role_changed')).json();
    expect(exact.items.every((e: { action: string }) => e.action === 'user.role_changed')).toBe(true);
    const prefix = (await logs('?action=user.*&per_page=500')).json();
    expect(new Set(prefix.items.map((e: { action: string }) => e.action))).toEqual(new Set(['user.created', 'user.role_changed']));
    const byActor = (await logs(`?actor_id=${tenant.admin.user_id}&per_page=500`)).json();
    expect(byActor.items.every((e: { actor_id: string }) => e.actor_id === tenant.admin.user_id)).toBe(true);
    const since = (await logs(`?since=${new Date(t.clock.now().getTime() - 500).toISOString()}`)).json();
    expect(since.items.map((e: { action: string }) => e.action)).toEqual(['api_key.created']);
    const byType = (await logs('?target_type=api_key')).json();
    expect(byType.total).toBe(1);
  });

  it('needs logs:read: 403 for read-only, 400 for a bad filter', async () => {
    expect((await logs('', tenant.users['read-only'].token)).statusCode).toBe(403);
    expect((await logs('?since=yesterday')).statusCode).toBe(400);
    expect((await logs('?per_page=501')).statusCode).toBe(400);
  });
});
