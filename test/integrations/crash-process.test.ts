import type { ServerResponse } from 'node:http';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabaseForChild, dbKind } from '../harness/database.js';
import { startServiceProcess, type ServiceProcess } from '../harness/service-process.js';
import { api, until } from '../harness/remote.js';
import { fixtureNode } from '../harness/compliance.js';
import { DELIVERY_LEASE_MS } from '../../src/modules/integrations/delivery-job.js';
import { verifyWebhook } from '../../src/modules/integrations/receiver.js';
import { assertNoFaultDamage, expectHonestHealth, watchHealth } from '../harness/fault-checks.js';
import { reply, startReceiver, type Receiver } from './helpers.js';

/**
 * Crash safety with real processes of the CLI (PostgreSQL; the in-process equivalent on both databases
 * is in restart.test.ts). A change (an audit that finds a violation) writes finding.created to the
 * outbox; the service dispatches it and is killed with SIGKILL while the receiver holds the request;
 * started again, it sends the same deliveries after the lease, with the same idempotency ids. The
 * restarted process says healthy at every moment, leaves no job past its lease, and the outbox holds
 * each state change once (only the deliveries repeat, under the same ids).
 */
const ADMIN = { username: 'crash-admin', password: 'crash-admin-password-1' };
const SECRET = 'crash-process-secret';

describe.runIf(dbKind() === 'postgres')('SIGKILL of the service mid-request (PostgreSQL, real CLI processes)', () => {
  const processes: ServiceProcess[] = [];
  let receiver: Receiver | null = null;
  let dispose: (() => Promise<void>) | null = null;
  afterAll(async () => {
    for (const p of processes) await p.stop('SIGKILL');
    await receiver?.close();
    await dispose?.();
  });

  it('every delivery the killed process had in flight is sent again after the restart, with the same idempotency id', async () => {
    receiver = await startReceiver();
    const held: ServerResponse[] = [];
    receiver.fallback = (_req, res) => void held.push(res);
    const db = await createDatabaseForChild();
    dispose = db.dispose;
    const env = {
      DATABASE_URL: db.url,
      CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username,
      CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password,
      CONTROLGRAPH_RATE_LIMITS: 'off',
      CONTROLGRAPH_VULNDB_SEED: 'off',
      CONTROLGRAPH_WORKER_POLL_MS: '200',
      CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      LOG_LEVEL: 'warn',
    };
    // The whole service in one process (API, worker, scheduler), killed and started again.
    const doomed = await startServiceProcess(env);
    processes.push(doomed);
    // CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS still works (the receiver is reached), with a warning at start.
    await until(
      'the deprecation warning',
      async () => (doomed.output().includes('deprecated settings: move their entries to CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS') ? true : undefined),
      10_000,
    );
    const session = await api(doomed.base, null, 'POST', '/api/v1/auth/token', ADMIN);
    const tenant = `/api/v1/tenants/${session.tenant_id}`;
    const integration = await api(doomed.base, session.token, 'POST', `${tenant}/integrations`, {
      type: 'webhook',
      name: 'crash receiver',
      config: { url: `${receiver.url}/hook`, secret: SECRET, events: ['finding.created'], timeout_seconds: 60 },
    });
    await api(doomed.base, session.token, 'POST', `${tenant}/nodes`, fixtureNode('aws-s3-bucket-versioning', 'violating', 'crash-bucket'));
    await api(doomed.base, session.token, 'POST', `${tenant}/findings/run`, {});
    await until('a delivery in flight', async () => (receiver!.requests.length > 0 ? true : undefined), 60_000);
    doomed.child.kill('SIGKILL');
    expect(await doomed.exited).toBeNull();
    const inFlight = new Map(receiver.requests.map((r) => [r.headers['webhook-id'] as string, r]));
    receiver.fallback = reply(200, 'ok');
    for (const res of held) res.destroy();

    const restarted = await startServiceProcess(env);
    processes.push(restarted);
    const apiProcess = restarted;
    const health = watchHealth(restarted.base);
    const deliveries = `${tenant}/integrations/${integration.id}/deliveries?per_page=500`;
    const done = await until(
      'every delivery succeeded',
      async () => {
        const list = await api(apiProcess.base, session.token, 'GET', deliveries);
        return list.total > 0 && list.items.every((d: { status: string }) => d.status === 'succeeded') ? list : undefined;
      },
      DELIVERY_LEASE_MS + 60_000,
    );
    // Each request the killed process had sent came again, same delivery id and body, after the lease.
    for (const [id, first] of inFlight) {
      const again = receiver.requests.filter((r) => r.headers['webhook-id'] === id && r !== first);
      expect(again.length, id).toBeGreaterThanOrEqual(1);
      expect(again[0]!.headers['idempotency-key']).toBe(id);
      expect(again[0]!.body).toBe(first.body);
      // Not before the killed process's lease ran out (it was claimed just before the first send).
      expect(again[0]!.at - first.at).toBeGreaterThanOrEqual(DELIVERY_LEASE_MS - 2_000);
      expect(verifyWebhook({ secret: SECRET, headers: again[0]!.headers, rawBody: again[0]!.body }).type).toBe('finding.created');
    }
    // Receivers see duplicates only of what was in flight; the history shows one attempt each.
    expect(done.items.every((d: { attempt_count: number }) => d.attempt_count === 1)).toBe(true);
    const ids = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(done.total);

    expectHonestHealth(await health.stop(), { alwaysUp: true });
    const direct = new pg.Client({ connectionString: db.url });
    await direct.connect();
    try {
      await assertNoFaultDamage(direct, session.tenant_id, { health: restarted.base });
    } finally {
      await direct.end();
    }
  }, 240_000);
});
