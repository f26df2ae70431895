import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';
import { buildApp } from '../../src/app.js';
import { assembleDeps } from '../../src/runtime.js';
import { createMetrics } from '../../src/platform/metrics.js';
import { createRedisRateLimiter } from '../../src/platform/ratelimit/redis-limiter.js';

let t: TestApp;
let free: TenantFixture;
let pro: TenantFixture;
beforeAll(async () => {
  t = await createTestApp({ env: { CONTROLGRAPH_RATE_LIMITS: 'on' } });
  free = await buildTenant(t, { plan: 'free' });
  pro = await buildTenant(t, { plan: 'pro' });
  // Fixture building spent tokens: start every bucket full.
  t.clock.advance(3_600_000);
  free = { ...free, admin: await (await import('../harness/identity.js')).fresh(t, free.admin) };
  pro = { ...pro, admin: await (await import('../harness/identity.js')).fresh(t, pro.admin) };
  t.clock.advance(120_000);
});
afterAll(() => t.close());

const whoami = (token: string) => call(t.app, token, { url: '/api/v1/auth/me' });

describe('rate limits per tenant plan', () => {
  it('free: burst of 10, then 429 RATE_LIMITED with retry_after and headers on every response', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await whoami(free.admin.token);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('60');
      seen.push(Number(res.headers['x-ratelimit-remaining']));
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(t.clock.now().getTime() / 1000));
    }
    expect(seen).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    const limited = await whoami(free.admin.token);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ error: { code: 'RATE_LIMITED', message: 'too many requests', details: { retry_after: 1 } }, retry_after: 1 });
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    // 60 per minute: one token a second.
    t.clock.advance(1000);
    expect((await whoami(free.admin.token)).statusCode).toBe(200);
    expect((await whoami(free.admin.token)).statusCode).toBe(429);
  });

  it('pro: burst of 50, limit 300', async () => {
    for (let i = 0; i < 50; i++) {
      const res = await whoami(pro.admin.token);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('300');
    }
    const limited = await whoami(pro.admin.token);
    expect(limited.statusCode).toBe(429);
    t.clock.advance(200);
    expect((await whoami(pro.admin.token)).statusCode).toBe(200);
  });

  it('enterprise: burst of 100, limit 1000', async () => {
    const enterprise = await buildTenant(t, { plan: 'enterprise' });
    t.clock.advance(120_000);
    const admin = await (await import('../harness/identity.js')).fresh(t, enterprise.admin);
    t.clock.advance(120_000);
    let allowed = 0;
    for (let i = 0; i < 101; i++) if ((await whoami(admin.token)).statusCode === 200) allowed++;
    expect(allowed).toBe(100);
    expect((await whoami(admin.token)).headers['x-ratelimit-limit']).toBe('1000');
  });

  it('never limits /healthz', async () => {
    for (let i = 0; i < 30; i++) expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });

  it('one bucket per tenant, shared by a second app process on the same database', async () => {
    t.clock.advance(120_000);
    const other = t.db.kind === 'postgres' ? await t.db.openAnother() : t.db.handle;
    const deps = assembleDeps(t.deps.config, other, t.clock, t.deps.log, createMetrics());
    const second = await buildApp(deps);
    try {
      let allowed = 0;
      for (let i = 0; i < 12; i++) {
        const app = i % 2 === 0 ? t.app : second;
        const res = await call(app, free.admin.token, { url: '/api/v1/auth/me' });
        if (res.statusCode === 200) allowed++;
      }
      expect(allowed).toBe(10);
    } finally {
      await second.close();
    }
  });
});

describe('refused authenticated requests', () => {
  // Fresh tenants, their buckets full: a free one whose users are refused, a pro one they aim at.
  let home: TenantFixture;
  let target: TenantFixture;
  let key: string;
  let narrowKey: string;
  beforeAll(async () => {
    t.clock.advance(120_000);
    home = await buildTenant(t, { plan: 'free' });
    target = await buildTenant(t, { plan: 'pro' });
    key = (await createApiKey(t, home, { permissions: ['nodes:read'] })).key;
    narrowKey = (await createApiKey(t, home, { permissions: ['findings:read'] })).key;
    t.clock.advance(120_000);
  });
  const remaining = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-remaining']);

  it('403 missing permission spends the bucket and carries the headers', async () => {
    const res = await call(t.app, home.users['read-only'].token, { url: `/api/v1/tenants/${home.id}/audit-logs` });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('missing permission logs:read');
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    expect(remaining(res)).toBe(9);
    expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(t.clock.now().getTime() / 1000));
    // The same bucket as the tenant's allowed requests.
    expect(remaining(await whoami(home.admin.token))).toBe(8);
    // An API key without the permission, too.
    const byKey = await call(t.app, narrowKey, { url: `/api/v1/tenants/${home.id}/nodes` });
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json().error.message).toBe('missing permission nodes:read');
    expect(remaining(byKey)).toBe(7);
  });

  it("403 no access to this tenant spends the token tenant's bucket, not the path tenant's", async () => {
    const res = await call(t.app, home.admin.token, { url: `/api/v1/tenants/${target.id}/users` });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe('no access to this tenant');
    // The free plan of the token's tenant, not the pro plan of the tenant in the path.
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    expect(remaining(res)).toBe(6);
    const byKey = await call(t.app, key, { url: `/api/v1/tenants/${target.id}/nodes` });
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json().error.message).toBe('no access to this tenant');
    expect(byKey.headers['x-ratelimit-limit']).toBe('60');
    expect(remaining(byKey)).toBe(5);
    // The path tenant's bucket is untouched.
    const other = await whoami(target.admin.token);
    expect(other.headers['x-ratelimit-limit']).toBe('300');
    expect(remaining(other)).toBe(49);
  });

  it('refused requests exhaust the bucket like any other: then 429, and only for the token tenant', async () => {
    for (let left = 4; left >= 0; left--) {
      const res = await call(t.app, home.admin.token, { url: `/api/v1/tenants/${target.id}/users` });
      expect(res.statusCode).toBe(403);
      expect(remaining(res)).toBe(left);
    }
    const limited = await call(t.app, home.admin.token, { url: `/api/v1/tenants/${target.id}/users` });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect((await whoami(home.users.auditor.token)).statusCode).toBe(429);
    expect((await whoami(target.admin.token)).statusCode).toBe(200);
  });

  it('a request without a valid credential spends nothing and has no headers', async () => {
    t.clock.advance(120_000);
    const res = await call(t.app, 'not-a-token', { url: `/api/v1/tenants/${home.id}/users` });
    expect(res.statusCode).toBe(401);
    expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
    expect(remaining(await whoami(home.admin.token))).toBe(9);
  });
});

async function redisReachable(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(6379, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.setTimeout(500, () => (socket.destroy(), resolve(false)));
  });
}

describe('Redis limiter (REDIS_URL)', async () => {
  const available = await redisReachable();
  it.skipIf(!available)('applies the same token bucket in Redis', async () => {
    const limiter = createRedisRateLimiter('redis://127.0.0.1:6379');
    try {
      const key = `test:${process.pid}:${Date.now()}`;
      const now = new Date('2030-01-01T00:00:00Z');
      const decisions = [];
      for (let i = 0; i < 11; i++) decisions.push(await limiter.consume(key, 'free', now));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
      expect(decisions[10]).toMatchObject({ allowed: false, remaining: 0, retryAfter: 1, limit: 60 });
      expect((await limiter.consume(key, 'free', new Date(now.getTime() + 1000))).allowed).toBe(true);
    } finally {
      await limiter.close();
    }
  });
});
