import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { RESPONDENT_LIMITS } from '../../src/modules/questionnaires/respondent-rate-limit.js';
import { api, assign, fromTemplate, publish } from './helpers.js';

/**
 * The outside respondent's routes (/respond/*) are public to the authenticator, so the tenant's
 * plan bucket never sees them: they are limited per link token and per client address, with the
 * service's limiter, 429 RATE_LIMITED and Retry-After. The limiter runs on the app's manual clock.
 */
let t: TestApp;
let tenant: TenantFixture;
let assessmentId: string;

beforeAll(async () => {
  t = await createTestApp({ env: { CONTROLGRAPH_RATE_LIMITS: 'on' } });
  tenant = await buildTenant(t, { plan: 'enterprise' });
  const q = await fromTemplate(t, tenant.admin.token, tenant.id, { template_id: 'fedramp-at' });
  await publish(t, tenant.admin.token, tenant.id, q.id);
  const [a] = await assign(t, tenant.admin.token, tenant.id, q.id, { assignees: [tenant.users['read-only'].user_id] });
  assessmentId = a!.id as string;
});
afterAll(() => t.close());

async function newToken(): Promise<string> {
  t.clock.advance(60_000); // the tenant's own bucket is not what is tested here
  const res = await call(t.app, tenant.users['security-analyst'].token, {
    method: 'POST',
    url: `${api(tenant.id)}/assessments/${assessmentId}/links`,
    payload: { name: 'Acme' },
    expect: 201,
  });
  return res.json().token as string;
}

const open = (token: string, ip: string) => call(t.app, token, { url: '/api/v1/respond/assessment', remoteAddress: ip });

describe('rate limits on /respond/*', () => {
  it('per token: past its burst 429 RATE_LIMITED with Retry-After, from any address; another token still opens', async () => {
    const token = await newToken();
    const { burst } = RESPONDENT_LIMITS.token;
    for (let i = 0; i < burst; i++) {
      // Spread over addresses so only the token's bucket fills.
      const res = await open(token, `10.1.0.${i + 1}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe(String(RESPONDENT_LIMITS.token.perMinute));
    }
    const limited = await open(token, '10.1.1.1');
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ error: { code: 'RATE_LIMITED', message: 'too many requests', details: { retry_after: 1 } }, retry_after: 1 });
    expect(limited.headers['retry-after']).toBe('1');
    // The refused request never reached the link: it was not counted as a use.
    const [link] = (await call(t.app, tenant.admin.token, { url: `${api(tenant.id)}/assessments/${assessmentId}/links`, expect: 200 })).json().items;
    expect(link.use_count).toBe(burst);
    // Saving answers is limited by the same bucket.
    const save = await call(t.app, token, { method: 'POST', url: '/api/v1/respond/assessment/responses', payload: { responses: [] }, remoteAddress: '10.1.1.2' });
    expect(save.statusCode).toBe(429);
    expect((await open(await newToken(), '10.1.1.3')).statusCode).toBe(200);
    // The bucket refills with time: one request a second.
    t.clock.advance(1_000);
    expect((await open(token, '10.1.1.4')).statusCode).toBe(200);
  });

  it('per address: guessing tokens from one address ends in 429 before any lookup; other addresses are not affected', async () => {
    const { burst } = RESPONDENT_LIMITS.address;
    const token = await newToken();
    const statuses: number[] = [];
    for (let i = 0; i <= burst; i++) statuses.push((await open(`cgr_${String(i).padStart(40, 'x')}`, '192.0.2.7')).statusCode);
    expect(statuses.slice(0, burst).every((s) => s === 401)).toBe(true);
    expect(statuses[burst]).toBe(429);
    const limited = await call(t.app, null, { url: '/api/v1/respond/assessment', remoteAddress: '192.0.2.7' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.json().error.code).toBe('RATE_LIMITED');
    // A real token from that address is refused too; from another address it opens.
    expect((await open(token, '192.0.2.7')).statusCode).toBe(429);
    expect((await open(token, '192.0.2.8')).statusCode).toBe(200);
  });
});
