import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { buildApp } from '../../src/app.js';
import { assembleDeps } from '../../src/runtime.js';
import { createMetrics } from '../../src/platform/metrics.js';

/**
 * Identities are cached per process for a few seconds; a change made through one process must take
 * effect in another at once (NOTIFY on commit), not after the cache lifetime.
 */
let t: TestApp;
let tenant: TenantFixture;
let second: FastifyInstance;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  const handle = t.db.kind === 'postgres' ? await t.db.openAnother() : t.db.handle;
  second = await buildApp(assembleDeps(t.deps.config, handle, t.clock, t.deps.log, createMetrics()));
});
afterAll(async () => {
  await second.close();
  await t.close();
});

async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 3_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('change not seen by the other process in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('identity cache across processes', () => {
  it('a role change through one process applies to a cached token in the other', async () => {
    const user = tenant.users['read-only'];
    const url = `/api/v1/tenants/${tenant.id}/audit-logs`;
    expect((await call(second, user.token, { url })).statusCode).toBe(403);
    await call(t.app, tenant.admin.token, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}/users/${user.user_id}/role`, payload: { role: 'auditor' }, expect: 200 });
    await eventually(async () => (await call(second, user.token, { url })).statusCode === 200);
  });

  it('logout through one process revokes the token in the other', async () => {
    const user = tenant.users.auditor;
    expect((await call(second, user.token, { url: '/api/v1/auth/me' })).statusCode).toBe(200);
    await call(t.app, user.token, { method: 'POST', url: '/api/v1/auth/logout', expect: 204 });
    await eventually(async () => (await call(second, user.token, { url: '/api/v1/auth/me' })).statusCode === 401);
  });

  it('revoking a key through one process refuses it in the other', async () => {
    const { key, id } = await createApiKey(t, tenant, { permissions: ['tenant:read'] });
    expect((await call(second, key, { url: '/api/v1/auth/me' })).statusCode).toBe(200);
    await call(t.app, tenant.admin.token, { method: 'DELETE', url: `/api/v1/api-keys/${id}`, expect: 200 });
    await eventually(async () => (await call(second, key, { url: '/api/v1/auth/me' })).statusCode === 401);
  });
});
