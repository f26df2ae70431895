import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../harness/app.js';
import { buildTenant, type TenantFixture } from '../harness/identity.js';
import { assertNoFaultDamage } from '../harness/fault-checks.js';
import { createDeliveryApp, createIntegration, deliveriesOf, emit, findingCreated, reply, startReceiver, type Receiver } from '../integrations/helpers.js';

/**
 * Fault: badly behaved webhook receivers. One hangs past the timeout, one resets the connection, one
 * answers slowly but in time. Hanging and resetting are failed attempts that the schedule retries
 * (with the same idempotency id) and that succeed once the receiver behaves; the slow one is a
 * success; the worker is never held up for longer than the timeout and nothing is delivered twice.
 * After each, no job is left running past its lease and /healthz says healthy.
 */
describe('fault: webhook receivers that hang, reset or answer slowly', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  const held: Array<() => void> = [];

  beforeAll(async () => {
    t = await createDeliveryApp({ env: { CONTROLGRAPH_WEBHOOK_RETRY_SCHEDULE: '0,30,60,90,120' } });
    tenant = await buildTenant(t);
  });
  afterAll(async () => {
    for (const release of held) release();
    await t.close();
  });

  /** One event to a fresh receiver that first behaves as given (`times` times), then answers 200. */
  async function deliverOnce(path: string, behave: Receiver['fallback'], times = 1) {
    t.clock.advance(1_000);
    const receiver = await startReceiver();
    const created = await createIntegration(t, tenant.admin.token, tenant.id, {
      type: 'webhook',
      name: path,
      config: { url: `${receiver.url}${path}`, secret: 'fault-receiver-secret', events: ['finding.created'], timeout_seconds: 1 },
    });
    for (let i = 0; i < times; i++) receiver.queue.push(behave);
    receiver.fallback = reply(200, 'ok');
    await emit(t, [findingCreated(tenant.id, tenant.defaultWorkspaceId)]);
    const started = Date.now();
    await t.drain();
    const firstRound = Date.now() - started;
    const first = (await deliveriesOf(t, tenant.admin.token, tenant.id, created.id)).items[0];
    // The retry, 30 s later on the manual clock, reaches a receiver that now answers 200.
    t.clock.advance(31_000);
    await t.drain();
    const after = (await deliveriesOf(t, tenant.admin.token, tenant.id, created.id)).items;
    await receiver.close();
    await assertNoFaultDamage(t.deps.database.db, tenant.id, { now: t.clock.now(), health: t.app });
    return { first, after, firstRound, requests: [...receiver.requests] };
  }

  it('a receiver that hangs: a failed attempt after the timeout, delivered on the retry with the same id', async () => {
    const { first, after, firstRound, requests } = await deliverOnce('/hang', (_req, res) => void held.push(() => res.end('late')));
    expect(first).toMatchObject({ status: 'pending', attempt_count: 1, last_error: 'no HTTP response within 1 s' });
    expect(firstRound).toBeLessThan(15_000);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ status: 'succeeded', attempt_count: 2 });
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  // A fresh receiver: the reset hits a new connection (a reset kept-alive one is resent at once).
  it('a receiver that resets the connection: a failed attempt, delivered on the retry with the same id', async () => {
    const { first, after, requests } = await deliverOnce('/reset', (_req, res) => void res.socket?.destroy());
    expect(first).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: null });
    expect(first!.last_error).toBeTruthy();
    expect(after[0]).toMatchObject({ status: 'succeeded', attempt_count: 2 });
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  it('a receiver that answers slowly but within the timeout: delivered at once', async () => {
    const { first, requests } = await deliverOnce('/slow', (_req, res) => void setTimeout(() => res.end('ok'), 600));
    expect(first).toMatchObject({ status: 'succeeded', attempt_count: 1, last_status_code: 200 });
    expect(requests).toHaveLength(1);
  });
});
