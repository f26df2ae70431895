import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { addUser, buildTenant, call, PASSWORD, type Session, type TenantFixture } from '../harness/identity.js';

/**
 * The login throttle counts a guess before its password is evaluated, in one step with the check:
 * parallel guesses cannot all pass the check before the first failure is counted.
 */
let t: TestApp;
let tenant: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t.close());

const guess = (username: string, password: string, remoteAddress = '127.0.0.1') =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { username, password }, remoteAddress });

const statuses = (codes: number[]) => codes.reduce<Record<number, number>>((acc, c) => ({ ...acc, [c]: (acc[c] ?? 0) + 1 }), {});

async function failedLoginsOf(user: Session): Promise<number> {
  const log = await call(t.app, tenant.admin.token, {
    url: `/api/v1/tenants/${tenant.id}/audit-logs?action=auth.login_failed&target_id=${user.user_id}&per_page=500`,
    expect: 200,
  });
  return log.json().total;
}

describe('login throttle under parallel guesses', () => {
  it('of 60 parallel guesses for one username (the right password among them), at most 5 are evaluated; the rest are 429', async () => {
    const victim = await addUser(t, tenant, 'read-only');
    const passwords = [...Array.from({ length: 59 }, (_, i) => `wrong-password-${i}`), PASSWORD];
    const answers = await Promise.all(passwords.map((p) => guess(victim.username, p)));
    const counts = statuses(answers.map((a) => a.statusCode));
    expect((counts[401] ?? 0) + (counts[200] ?? 0), JSON.stringify(counts)).toBeLessThanOrEqual(5);
    expect(counts[429], JSON.stringify(counts)).toBe(60 - (counts[401] ?? 0) - (counts[200] ?? 0));
    for (const refused of answers.filter((a) => a.statusCode === 429)) expect(refused.json().error.code).toBe('RATE_LIMITED');
    // The audit log records every evaluated wrong password: no more than were answered 401.
    expect(await failedLoginsOf(victim)).toBe(counts[401] ?? 0);
  });

  it('the same holds when the guesses come from 60 addresses', async () => {
    const victim = await addUser(t, tenant, 'read-only');
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => guess(victim.username, `wrong-password-${i}`, `203.0.113.${i + 1}`)));
    const counts = statuses(answers.map((a) => a.statusCode));
    expect(counts, JSON.stringify(counts)).toEqual({ 401: 5, 429: 55 });
    expect(await failedLoginsOf(victim)).toBe(5);
  });

  it('a successful login forgives the guesses before it, so the user has 5 again', async () => {
    const victim = await addUser(t, tenant, 'read-only');
    for (let i = 0; i < 4; i++) expect((await guess(victim.username, 'wrong-password')).statusCode).toBe(401);
    expect((await guess(victim.username, PASSWORD)).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await guess(victim.username, 'wrong-password')).statusCode).toBe(401);
    expect((await guess(victim.username, 'wrong-password')).statusCode).toBe(429);
  });

  it('successful logins do not use up the address allowance (52 logins from one address)', async () => {
    const user = await addUser(t, tenant, 'auditor');
    for (let i = 0; i < 52; i++) expect((await guess(user.username, PASSWORD, '198.51.100.77')).statusCode).toBe(200);
  });
});
