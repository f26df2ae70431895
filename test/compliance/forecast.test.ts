import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { builtinRule } from '../../src/modules/compliance/rule-catalog.js';

/** Issue 23 item 6: GET /controls/forecast?date= from expiring acceptances and attestations and POA&M items scheduled to close. */

let t: TestApp;
// One finding per violating key: its fixture violates no other rule.
const RULE = 'aws-kms-key-rotation-enabled';
const FRAMEWORK = builtinRule(RULE)!.framework;
const DAY = 86_400_000;
const inDays = (days: number) => new Date(t.clock.now().getTime() + days * DAY);
const dayIn = (days: number) => inDays(days).toISOString().slice(0, 10);
const findingOf = (name: string) => `${RULE}:${nodeIdOf(fixtureNode(RULE, 'violating', name))}`;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const analyst = (tenant: TenantFixture) => tenant.users['security-analyst'].token;
const forecast = (tenant: TenantFixture, date: string) => call(t.app, analyst(tenant), { url: `/api/v1/tenants/${tenant.id}/controls/forecast?date=${encodeURIComponent(date)}` });
const ok = async (tenant: TenantFixture, date: string) => {
  const res = await forecast(tenant, date);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

/** A tenant whose workspace has one open finding (key k1) after an audit. */
async function withFinding(): Promise<TenantFixture> {
  const tenant = await buildTenant(t);
  await putNodes(t, analyst(tenant), tenant.id, [fixtureNode(RULE, 'violating', 'k1')]);
  await audit(t, analyst(tenant), tenant.id);
  return tenant;
}

describe('GET /controls/forecast', () => {
  it('a risk acceptance expiring before the date lowers the forecast; one expiring after it does not', async () => {
    const tenant = await withFinding();
    await call(t.app, analyst(tenant), {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/findings/${encodeURIComponent(findingOf('k1'))}/accept`,
      payload: { reason: 'compensating control', owner: 'crypto-team', expires_at: inDays(10).toISOString() },
      expect: 201,
    });
    const status = (await call(t.app, analyst(tenant), { url: `/api/v1/tenants/${tenant.id}/controls/status`, expect: 200 })).json();
    const before = await ok(tenant, dayIn(5));
    expect(before).toMatchObject({ date: `${dayIn(5)}T00:00:00.000Z`, current_overall_score: status.overall_score, overall_score: status.overall_score });
    expect(before.assumptions).toEqual({ acceptances_expiring: 0, attestations_expiring: 0, poam_findings_closing: 0 });
    expect(before.by_framework[FRAMEWORK]).toEqual({
      score: status.by_framework[FRAMEWORK].score,
      current_score: status.by_framework[FRAMEWORK].score,
      failing_controls: 0,
      current_failing_controls: 0,
    });
    const after = await ok(tenant, dayIn(20));
    expect(after.assumptions.acceptances_expiring).toBe(1);
    expect(after.current_overall_score).toBe(status.overall_score);
    expect(after.overall_score).toBeLessThan(status.overall_score);
    expect(after.by_framework[FRAMEWORK].score).toBeLessThan(status.by_framework[FRAMEWORK].score);
    expect(after.by_framework[FRAMEWORK].failing_controls).toBeGreaterThan(0);
    // Every enabled framework is forecast.
    expect(Object.keys(after.by_framework)).toEqual(Object.keys(status.by_framework));
  });

  it('a POA&M item scheduled to close raises the forecast from the day after its scheduled completion', async () => {
    const tenant = await withFinding();
    const due = dayIn(10);
    await call(t.app, analyst(tenant), {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/poam`,
      payload: { finding_id: findingOf('k1'), scheduled_completion: due },
      expect: 201,
    });
    const onTheDay = await ok(tenant, due);
    expect(onTheDay.overall_score).toBe(onTheDay.current_overall_score);
    expect(onTheDay.assumptions.poam_findings_closing).toBe(0);
    const dayAfter = await ok(tenant, dayIn(11));
    expect(dayAfter.assumptions.poam_findings_closing).toBe(1);
    expect(dayAfter.overall_score).toBeGreaterThan(dayAfter.current_overall_score);
    expect(dayAfter.by_framework[FRAMEWORK]).toMatchObject({ failing_controls: 0 });
    expect(dayAfter.by_framework[FRAMEWORK].current_failing_controls).toBeGreaterThan(0);
  });

  it('an attestation expiring before the date lowers the forecast; one expiring after it does not', async () => {
    const tenant = await buildTenant(t);
    await t.deps.database.db
      .insertInto('control_attestations')
      .values({
        tenant_id: tenant.id,
        workspace_id: tenant.defaultWorkspaceId,
        framework: 'soc2',
        control_id: 'CC1.1',
        status: 'attested',
        attested_at: t.clock.now(),
        expires_at: inDays(10),
        updated_at: t.clock.now(),
      })
      .execute();
    const before = await ok(tenant, inDays(9).toISOString());
    expect(before.by_framework.soc2.score).toBe(before.by_framework.soc2.current_score);
    expect(before.assumptions.attestations_expiring).toBe(0);
    const after = await ok(tenant, inDays(11).toISOString());
    expect(after.assumptions.attestations_expiring).toBe(1);
    expect(after.by_framework.soc2.score).toBeLessThan(after.by_framework.soc2.current_score);
    expect(after.overall_score).toBeLessThan(after.current_overall_score);
  });

  it('400: no date, a past or present date, a date that is not one, more than 731 days ahead; another tenant is 403', async () => {
    const tenant = await buildTenant(t);
    const missing = await call(t.app, analyst(tenant), { url: `/api/v1/tenants/${tenant.id}/controls/forecast` });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.message).toMatch(/date/);
    for (const [date, message] of [
      [dayIn(-1), /date must be in the future/],
      [dayIn(0), /date must be in the future/],
      [t.clock.now().toISOString(), /date must be in the future/],
      ['next week', /date must be a date \(YYYY-MM-DD\) or an RFC 3339 date-time/],
      ['2027-02-29', /date is not a calendar date/],
      [dayIn(800), /date must be at most 731 days ahead/],
    ] as const) {
      const res = await forecast(tenant, date);
      expect(res.statusCode, date).toBe(400);
      expect(res.json().error.message, date).toMatch(message);
    }
    const other = await buildTenant(t);
    const crossed = await call(t.app, analyst(other), { url: `/api/v1/tenants/${tenant.id}/controls/forecast?date=${dayIn(3)}` });
    expect(crossed.statusCode).toBe(403);
  });
});
