import { sql } from 'kysely';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestApp } from '../harness/app.js';
import { buildTenant, fresh, type TenantFixture } from '../harness/identity.js';
import { loadConfig } from '../../src/config.js';
import { createMetrics } from '../../src/platform/metrics.js';
import { assembleDeps, createWorker } from '../../src/runtime.js';
import type { JobRow } from '../../src/platform/jobs/queue.js';
import { DELIVER_JOB, dispatch } from '../../src/modules/integrations/dispatcher.js';
import { DELIVERY_LEASE_MS } from '../../src/modules/integrations/delivery-job.js';
import { verifyWebhook } from '../../src/modules/integrations/receiver.js';
import { createDeliveryApp, createIntegration, deliveriesOf, emit, findingCreated, removeIntegrations, startReceiver, waitFor, type Receiver } from './helpers.js';

/**
 * What survives a restart of the service: deliveries are rows and queue jobs, so a new process (here:
 * new dependencies and a new worker over the same database, with the configuration it starts with)
 * carries on with them. Two cases: a worker killed mid-request (the attempt is sent again, with the
 * same idempotency id, once its lease runs out), and a restart with a narrower
 * CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS (the deprecated alias of CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS), after which the outbound guard refuses at delivery what it let through
 * at creation. Only loopback servers are ever connected to: the private and link-local targets are
 * refused before any connection.
 */
let t: TestApp;
/** The tests' DNS (no real lookups): a name resolving to the trap's loopback address. */
const names = async (host: string) => {
  if (host !== 'inside.test') throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return [{ address: '127.0.0.2', family: 4 }];
};
let tenant: TenantFixture;
let token: string;
let receiver: Receiver;
let trap: Receiver;
const SECRET = 'whsec_cmVzdGFydC10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5';
const S = 1_000;

beforeAll(async () => {
  receiver = await startReceiver();
  // A second loopback address (all of 127/8 is loopback): the target of the literal-loopback case.
  trap = await startReceiver({ host: '127.0.0.2' });
  // The service as configured when the integrations were created: these hosts were allow-listed.
  t = await createDeliveryApp({ allowHosts: '127.0.0.1,127.0.0.2,::1,10.0.0.7,169.254.169.254', config: { outboundLookup: names } });
  tenant = await buildTenant(t);
});
afterAll(async () => {
  await receiver.close();
  await trap.close();
  await t.close();
});
beforeEach(async () => {
  t.clock.advance(S);
  receiver.reset();
  token = (await fresh(t, tenant.admin)).token;
});
afterEach(async () => {
  // Each test starts without integrations; the jobs left for deleted ones find nothing to do.
  await removeIntegrations(t, [tenant.id]);
});

/** The service started again over the same database with another environment. */
function restarted(env: Record<string, string>) {
  const config = {
    ...loadConfig({ LOG_LEVEL: 'silent', CONTROLGRAPH_RATE_LIMITS: 'off', CONTROLGRAPH_VULNDB_SEED: 'off', ...env }),
    databaseUrl: t.db.url,
    artifactStore: t.deps.config.artifactStore,
    outboundLookup: names,
  };
  const deps = assembleDeps(config, t.db.handle, t.clock, pino({ level: 'silent' }), createMetrics());
  return { deps, worker: createWorker(deps, t.modules) };
}

const hook = (url: string, events = ['finding.created']) =>
  createIntegration(t, token, tenant.id, { type: 'webhook', name: url, config: { url, secret: SECRET, events, timeout_seconds: 5 } });

describe('a worker killed mid-request', () => {
  it('leaves the attempt leased; once the lease runs out a restarted worker sends it again with the same idempotency id', async () => {
    const created = await hook(`${receiver.url}/crash`);
    // The receiver takes the first request and never answers it: the worker dies while waiting.
    const held: Array<() => void> = [];
    receiver.queue.push((_req, res) => void held.push(() => res.destroy()));
    const event = findingCreated(tenant.id, tenant.defaultWorkspaceId);
    await emit(t, [event]);
    // The dispatcher turns the event into a delivery with a queued attempt job.
    await dispatch({ db: t.deps.database.db, clock: t.clock, log: t.deps.log }, { firstDelaySeconds: 0 });
    const [delivery] = (await deliveriesOf(t, token, tenant.id, created.id)).items;
    expect(delivery).toMatchObject({ status: 'pending', attempt_count: 0 });

    // The doomed worker: claims the job as every worker does (a lease nobody will renew) and starts the
    // request; its result is never recorded, as when the process is killed with SIGKILL.
    const claimed = await sql<JobRow>`
      UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_token = gen_random_uuid(), lease_owner = 'killed-worker',
        lease_expires_at = ${t.clock.now()}::timestamptz + make_interval(secs => ${DELIVERY_LEASE_MS / 1000}),
        started_at = coalesce(started_at, ${t.clock.now()})
      WHERE kind = ${DELIVER_JOB} AND status = 'queued' AND payload->>'delivery_id' = ${delivery!.id}
      RETURNING *`.execute(t.deps.database.db);
    expect(claimed.rows).toHaveLength(1);
    const job = claimed.rows[0]!;
    const definition = t.modules.find((m) => m.name === 'integrations')!.jobs!(t.deps).find((d) => d.kind === DELIVER_JOB)!;
    const killed = new AbortController();
    const inFlight = definition.run(job.payload, { job, signal: killed.signal, db: t.deps.database.db, clock: t.clock, log: t.deps.log, heartbeat: async () => undefined });
    await waitFor(() => receiver.requests.length === 1, 10_000, 'the doomed request');
    const first = receiver.requests[0]!;

    // The restarted service waits for the lease …
    const service = restarted({ CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
    await service.worker.drain();
    expect(receiver.requests).toHaveLength(1);
    // … and then sends the same attempt again: same delivery id and body, a fresh signature.
    t.clock.advance(DELIVERY_LEASE_MS + 1);
    await service.worker.drain();
    expect(receiver.requests).toHaveLength(2);
    const again = receiver.requests[1]!;
    for (const header of ['idempotency-key', 'webhook-id', 'x-controlgraph-delivery']) {
      expect(first.headers[header]).toBe(delivery!.id);
      expect(again.headers[header]).toBe(delivery!.id);
    }
    expect(again.body).toBe(first.body);
    expect(verifyWebhook({ secret: SECRET, headers: again.headers, rawBody: again.body, now: t.clock.now() }).id).toBe(delivery!.event_id);
    // A receiver on a standard library verifies it too (its clock set to the service's manual clock).
    vi.useFakeTimers({ toFake: ['Date'], now: t.clock.now() });
    try {
      expect(new Webhook(SECRET).verify(again.body, again.headers as Record<string, string>)).toMatchObject({ id: delivery!.event_id });
    } finally {
      vi.useRealTimers();
    }

    const [done] = (await deliveriesOf(t, token, tenant.id, created.id)).items;
    expect(done).toMatchObject({ status: 'succeeded', attempt_count: 1, last_status_code: 200 });
    const jobRow = await t.deps.database.db.selectFrom('jobs').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
    expect(jobRow).toMatchObject({ status: 'succeeded', attempts: 2 });

    // The killed worker's request finally ends: nothing of it is recorded.
    killed.abort(new Error('killed'));
    for (const release of held) release();
    await inFlight;
    const [after] = (await deliveriesOf(t, token, tenant.id, created.id)).items;
    expect(after).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    expect(after!.attempts).toHaveLength(1);
  });

  it('a pending retry survives the restart and is sent by the new process at its time', async () => {
    const created = await hook(`${receiver.url}/later`);
    receiver.queue.push((_req, res) => {
      res.writeHead(503, { 'retry-after': '60' });
      res.end('down for maintenance');
    });
    await emit(t, [findingCreated(tenant.id, tenant.defaultWorkspaceId)]);
    await t.drain();
    expect((await deliveriesOf(t, token, tenant.id, created.id)).items[0]).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: 503 });
    const service = restarted({ CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
    t.clock.advance(59 * S);
    await service.worker.drain();
    expect(receiver.requests).toHaveLength(1);
    t.clock.advance(S);
    await service.worker.drain();
    expect(receiver.requests).toHaveLength(2);
    expect((await deliveriesOf(t, token, tenant.id, created.id)).items[0]).toMatchObject({ status: 'succeeded', attempt_count: 2 });
  });
});

describe('SSRF guard at delivery', () => {
  it('refuses loopback, private, link-local targets and a name resolving to loopback once they are no longer allow-listed', async () => {
    const targets = [
      { url: `https://127.0.0.2:${trap.port}/hook`, error: 'target refused: the address is not allowed (127.0.0.2 is a loopback address)' },
      { url: `https://[::1]:${receiver.port}/hook`, error: 'target refused: the address is not allowed (::1 is a loopback address)' },
      { url: `https://inside.test:${trap.port}/hook`, error: 'target refused: the address is not allowed (inside.test resolves to a loopback address)' },
      { url: 'https://10.0.0.7/hook', error: 'target refused: the address is not allowed (10.0.0.7 is a private address)' },
      { url: 'https://169.254.169.254/latest/meta-data/', error: 'target refused: the address is not allowed (169.254.169.254 is a link-local address)' },
    ];
    // Accepted at creation: these hosts were allow-listed then.
    const created = [];
    for (const target of targets) created.push(await hook(target.url));
    const connections = receiver.connections + trap.connections;

    // Restarted with only 127.0.0.1 allowed; no worker of the old configuration runs any more.
    const service = restarted({ CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
    await emit(t, [findingCreated(tenant.id, tenant.defaultWorkspaceId)]);
    await service.worker.drain();
    for (const [i, target] of targets.entries()) {
      const [delivery] = (await deliveriesOf(t, token, tenant.id, created[i].id)).items;
      expect(delivery, target.url).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: null });
      expect(delivery!.attempts[0]).toMatchObject({ outcome: 'failed', status_code: null, response_body: null, latency_ms: expect.any(Number) });
      if (typeof target.error === 'string') expect(delivery!.last_error).toBe(target.error);
      else expect(delivery!.last_error).toMatch(target.error);
    }
    // Nothing connected to the loopback servers.
    expect(receiver.connections + trap.connections).toBe(connections);
    expect(receiver.requests).toEqual([]);
    expect(trap.requests).toEqual([]);
  });
});
