import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { AUTO_DISABLE_WINDOW } from '../../src/modules/integrations/delivery-job.js';
import { createDeliveryApp, createIntegration, deliveriesOf, emit, findingCreated, removeIntegrations, reply, startReceiver, type Receiver } from './helpers.js';

/**
 * The retry schedule as configured (CONTROLGRAPH_WEBHOOK_RETRY_SCHEDULE, shortened here to seconds),
 * permanent failure, and the auto-disable rule: when a delivery fails for good, the integration is
 * disabled if more than 50% of its last 20 finished deliveries since it was (re-)enabled failed.
 * The receiver fails requests whose finding title starts with "fail".
 */
let t: TestApp;
let tenant: TenantFixture;
let token: string;
let receiver: Receiver;
const S = 1_000;
const SCHEDULE = [0, 2, 5, 10, 20];

beforeAll(async () => {
  t = await createDeliveryApp({ env: { CONTROLGRAPH_WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(',') } });
  tenant = await buildTenant(t);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});
beforeEach(async () => {
  t.clock.advance(S);
  receiver.reset((req, res) => reply(JSON.parse(req.body).data.finding?.title?.startsWith('fail') ? 500 : 200, 'answer')(req, res));
  token = (await fresh(t, tenant.admin)).token;
});
afterEach(async () => {
  await removeIntegrations(t, [tenant.id]);
});

const base = () => `/api/v1/tenants/${tenant.id}/integrations`;
const hook = () =>
  createIntegration(t, token, tenant.id, { type: 'webhook', name: 'hook', config: { url: `${receiver.url}/hook`, secret: 'schedule-secret', events: ['finding.created'] } });
const integration = async (id: string) => (await call(t.app, token, { url: `${base()}/${id}`, expect: 200 })).json();
const events = (title: string, n = 1) => Array.from({ length: n }, () => findingCreated(tenant.id, tenant.defaultWorkspaceId, { title }));
/** Runs due jobs, then moves the clock through the whole schedule so every delivery finishes. */
async function runSchedule() {
  await t.drain();
  for (const step of SCHEDULE.slice(1)) {
    t.clock.advance(step * S);
    await t.drain();
  }
  token = (await fresh(t, tenant.admin)).token;
}

describe('a shortened retry schedule', () => {
  it('attempts at each configured step, not a second early, and fails the delivery for good after the last', async () => {
    const created = await hook();
    await emit(t, events('fail always'));
    const start = t.clock.now().getTime();
    await t.drain();
    let at = 0;
    for (const [i, step] of SCHEDULE.slice(1).entries()) {
      expect(receiver.requests).toHaveLength(i + 1);
      const [pending] = (await deliveriesOf(t, token, tenant.id, created.id)).items;
      expect(pending).toMatchObject({ status: 'pending', attempt_count: i + 1, next_attempt_at: new Date(start + (at + step) * S).toISOString() });
      t.clock.advance((step - 1) * S);
      await t.drain();
      expect(receiver.requests).toHaveLength(i + 1);
      t.clock.advance(S);
      at += step;
      await t.drain();
    }
    expect(receiver.requests).toHaveLength(SCHEDULE.length);
    const [failed] = (await deliveriesOf(t, token, tenant.id, created.id)).items;
    expect(failed).toMatchObject({ status: 'failed', attempt_count: 5, next_attempt_at: null, last_error: 'HTTP 500' });
    expect(failed!.attempts.map((a: { attempted_at: string }) => (new Date(a.attempted_at).getTime() - start) / S)).toEqual([0, 2, 7, 17, 37]);
    // Nothing more is due, ever.
    t.clock.advance(86_400 * S);
    await t.drain();
    expect(receiver.requests).toHaveLength(5);
  });
});

describe('auto-disable', () => {
  it('not at exactly 50% failed, but above it; events while disabled are not delivered; PUT re-enables and the failed events are redelivered', async () => {
    const created = await hook();
    await emit(t, events('ok'));
    await runSchedule();
    await emit(t, events('fail one'));
    await runSchedule();
    // 1 of 2 finished deliveries failed: 50% is not above 50%.
    expect(await integration(created.id)).toMatchObject({ status: 'active', disabled_reason: null });

    await emit(t, events('fail two'));
    await runSchedule();
    const disabled = await integration(created.id);
    expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'auto-disabled: 2 of the last 3 deliveries failed (67%, above 50%)' });
    const log = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=integration.disabled`, expect: 200 })).json();
    expect(log.items.find((e: { target_id: string }) => e.target_id === created.id)).toMatchObject({ actor_type: 'system', details: { failed: 2, window: 3 } });

    // While disabled nothing is sent (events of that time are not kept for later).
    const sent = receiver.requests.length;
    await emit(t, events('while disabled'));
    await runSchedule();
    expect(receiver.requests).toHaveLength(sent);

    // Re-enabled by PUT; the two failed deliveries are still there and can be redelivered.
    receiver.fallback = reply(200, 'fixed');
    await call(t.app, token, { method: 'PUT', url: `${base()}/${created.id}`, payload: { status: 'active' }, expect: 200 });
    const failed = await deliveriesOf(t, token, tenant.id, created.id, '?status=failed');
    expect(failed.items.map((d) => d.attempt_count)).toEqual([5, 5]);
    for (const delivery of failed.items) {
      await call(t.app, token, { method: 'POST', url: `${base()}/${created.id}/deliveries/${delivery.id}/retry`, expect: 202 });
    }
    await t.drain();
    const after = await deliveriesOf(t, token, tenant.id, created.id);
    expect(after.items.map((d) => [d.status, d.attempt_count])).toEqual([
      ['succeeded', 6],
      ['succeeded', 6],
      ['succeeded', 1],
    ]);
    const titles = receiver.requests
      .slice(sent)
      .map((r) => JSON.parse(r.body).data.finding.title)
      .sort();
    expect(titles).toEqual(['fail one', 'fail two']);

    // The window starts again at the re-enabling: 1 failure against the 2 redelivered successes stays below.
    receiver.fallback = reply(500, 'broken again');
    t.clock.advance(S);
    await emit(t, events('fail three'));
    await runSchedule();
    expect(await integration(created.id)).toMatchObject({ status: 'active' });
    const audit = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=integration.enabled`, expect: 200 })).json();
    expect(audit.items.some((e: { target_id: string }) => e.target_id === created.id)).toBe(true);
  });

  it(`counts only the last ${AUTO_DISABLE_WINDOW} finished deliveries`, async () => {
    const created = await hook();
    // 12 successes, then 11 permanent failures: 11 of all 23 is below half, 11 of the last 20 above.
    await emit(t, events('ok', 12));
    await runSchedule();
    await emit(t, events('fail batch', 11));
    await runSchedule();
    const after = await integration(created.id);
    // Had the 10th failure (10 of 20, exactly half) disabled it, the reason would say so.
    expect(after).toMatchObject({ status: 'disabled', disabled_reason: 'auto-disabled: 11 of the last 20 deliveries failed (55%, above 50%)' });
    const all = await deliveriesOf(t, token, tenant.id, created.id, '?per_page=100');
    expect(all.items.filter((d) => d.status === 'failed')).toHaveLength(11);
    expect(all.items.filter((d) => d.status === 'succeeded')).toHaveLength(12);
  });
});
