import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode } from '../harness/compliance.js';
import { verifyWebhook } from '../../src/modules/integrations/receiver.js';
import { createDeliveryApp, createIntegration, deliveriesOf, emit, findingCreated, removeIntegrations, reply, startReceiver, type Receiver } from './helpers.js';

/**
 * Delivery of outbox events to webhooks: envelope, signatures, filters, the retry schedule (on the
 * manual clock: the worker takes due jobs by it), permanent failure, auto-disable, receiver signals,
 * redelivery. The receivers are loopback servers; 127.0.0.1 is allow-listed (hence http://).
 */
let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let receiver: Receiver;
let token: string;
const SECRET = 'delivery-test-secret';
const S = 1_000;

beforeAll(async () => {
  t = await createDeliveryApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});
beforeEach(async () => {
  // Integrations receive events from their creation on: a new second keeps tests apart.
  t.clock.advance(S);
  receiver.reset(reply(200, 'ok'));
  token = (await fresh(t, tenant.admin)).token;
});
afterEach(async () => {
  // Each test starts without integrations (and without jobs left for them).
  await removeIntegrations(t, [tenant.id, other.id]);
});

const base = () => `/api/v1/tenants/${tenant.id}/integrations`;
async function hook(path = '/hook', config: Record<string, unknown> = {}, name = 'hook') {
  return createIntegration(t, token, tenant.id, {
    type: 'webhook',
    name,
    config: { url: `${receiver.url}${path}`, secret: SECRET, events: ['finding.created', 'finding.resolved', 'compliance.score_changed'], ...config },
  });
}
const deliveries = (id: string, query = '') => deliveriesOf(t, token, tenant.id, id, query);
const integration = async (id: string) => (await call(t.app, token, { url: `${base()}/${id}`, expect: 200 })).json();
const event = (overrides: Record<string, unknown> = {}) => findingCreated(tenant.id, tenant.defaultWorkspaceId, overrides);
const paths = () => receiver.requests.map((r) => r.url).sort();

describe('delivering an event', () => {
  it('POSTs the envelope {id, type, tenant_id, timestamp, data}, signed both ways, with the idempotency id', async () => {
    const created = await hook('/hook', { headers: { 'X-Team': 'secops' } });
    const e = event();
    await emit(t, [e]);
    await t.drain();
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    const outbox = await t.deps.database.db
      .selectFrom('outbox_events')
      .selectAll()
      .where('tenant_id', '=', tenant.id)
      .where('type', '=', 'finding.created')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    const envelope = JSON.parse(request!.body);
    expect(envelope).toEqual({
      id: outbox.id,
      type: 'finding.created',
      tenant_id: tenant.id,
      workspace_id: tenant.defaultWorkspaceId,
      timestamp: t.clock.now().toISOString(),
      data: e.data,
    });
    for (const field of [
      'id',
      'rule_id',
      'framework',
      'control_id',
      'severity',
      'title',
      'description',
      'resource_id',
      'resource_type',
      'resource_name',
      'region',
      'remediation',
      'created_at',
    ]) {
      expect(envelope.data.finding).toHaveProperty(field);
    }
    const h = request!.headers;
    expect(h['content-type']).toBe('application/json');
    expect(h['x-controlgraph-event']).toBe('finding.created');
    expect(h['x-controlgraph-timestamp']).toBe(String(Math.floor(t.clock.now().getTime() / 1000)));
    expect(h['x-team']).toBe('secops');
    expect(request!.method).toBe('POST');
    const verified = verifyWebhook({ secret: SECRET, headers: h, rawBody: request!.body, now: t.clock.now() });
    expect(verified.id).toBe(outbox.id);
    const { 'x-controlgraph-signature': _own, ...standardOnly } = h;
    expect(verifyWebhook({ secret: SECRET, headers: standardOnly, rawBody: request!.body, now: t.clock.now() }).id).toBe(outbox.id);
    // The standardwebhooks package as the receiver (its clock set to the service's manual clock).
    vi.useFakeTimers({ toFake: ['Date'], now: t.clock.now() });
    try {
      expect(new Webhook(SECRET, { format: 'raw' }).verify(request!.body, h as Record<string, string>)).toEqual(envelope);
      expect(() => new Webhook('another-secret', { format: 'raw' }).verify(request!.body, h as Record<string, string>)).toThrow();
    } finally {
      vi.useRealTimers();
    }

    const list = await deliveries(created.id);
    expect(list.total).toBe(1);
    const delivery = list.items[0]!;
    expect(h['x-controlgraph-delivery']).toBe(delivery.id);
    expect(h['idempotency-key']).toBe(delivery.id);
    expect(h['webhook-id']).toBe(delivery.id);
    expect(delivery).toMatchObject({ event_id: outbox.id, event_type: 'finding.created', status: 'succeeded', attempt_count: 1, last_status_code: 200, last_error: null });
    expect(delivery.attempts).toEqual([
      {
        number: 1,
        attempted_at: t.clock.now().toISOString(),
        outcome: 'succeeded',
        status_code: 200,
        latency_ms: expect.any(Number),
        response_body: 'ok',
        error: null,
        next_attempt_at: null,
      },
    ]);
    const one = (await call(t.app, token, { url: `${base()}/${created.id}/deliveries/${delivery.id}`, expect: 200 })).json();
    expect(one.envelope).toEqual(envelope);
  });

  it('sends subscribed types only, and filters by severity, frameworks and resource_types', async () => {
    const a = await hook('/critical', { filters: { severity: ['CRITICAL'] } });
    const b = await hook('/pci', { filters: { frameworks: ['pci-dss'] } });
    const c = await hook('/buckets', { filters: { resource_types: ['aws.s3.bucket'], severity: ['HIGH', 'CRITICAL'] } });
    const d = await hook('/resolved-only', { events: ['finding.resolved'] });
    await emit(t, [
      event({ severity: 'HIGH', framework: 'cis-aws', resource_type: 'aws.s3.bucket' }),
      event({ severity: 'CRITICAL', framework: 'pci-dss', resource_type: 'aws.ec2.instance' }),
      event({ severity: 'LOW', framework: 'pci-dss', resource_type: 'aws.s3.bucket' }),
    ]);
    await t.drain();
    const severities = async (id: string) => (await deliveries(id)).total;
    expect(await severities(a.id)).toBe(1);
    expect(await severities(b.id)).toBe(2);
    expect(await severities(c.id)).toBe(1);
    expect(await severities(d.id)).toBe(0);
    const bodies = (path: string) => receiver.requests.filter((r) => r.url === path).map((r) => JSON.parse(r.body).data.finding);
    expect(bodies('/critical').map((f) => f.severity)).toEqual(['CRITICAL']);
    expect(
      bodies('/pci')
        .map((f) => f.severity)
        .sort(),
    ).toEqual(['CRITICAL', 'LOW']);
    expect(bodies('/buckets').map((f) => [f.severity, f.resource_type])).toEqual([['HIGH', 'aws.s3.bucket']]);
    expect(bodies('/resolved-only')).toEqual([]);
  });

  it('a severity filter does not hold back events without a severity (compliance.score_changed)', async () => {
    const created = await hook('/critical', { filters: { severity: ['CRITICAL'] } });
    await emit(t, [
      {
        tenantId: tenant.id,
        workspaceId: tenant.defaultWorkspaceId,
        type: 'compliance.score_changed',
        data: { framework: 'overall', previous_score: 80, current_score: 70, delta: -10, triggered_by: 'run', new_failures: 3, new_passes: 0 },
      },
    ]);
    await t.drain();
    expect((await deliveries(created.id)).items.map((x) => x.event_type)).toEqual(['compliance.score_changed']);
  });

  it('every workspace of the tenant by default; config.workspaces narrows; tenant-wide events always pass; other tenants never', async () => {
    const second = (await call(t.app, token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: `ws-${Date.now()}` }, expect: 201 })).json();
    const all = await hook('/all');
    const onlySecond = await hook('/second', { workspaces: [second.id] });
    await emit(t, [
      findingCreated(tenant.id, tenant.defaultWorkspaceId),
      findingCreated(tenant.id, second.id),
      { tenantId: tenant.id, workspaceId: null, type: 'compliance.score_changed', data: { framework: 'overall', previous_score: 90, current_score: 80, delta: -10 } },
      findingCreated(other.id, other.defaultWorkspaceId),
    ]);
    await t.drain();
    expect((await deliveries(all.id)).items.map((x) => x.workspace_id).sort()).toEqual([second.id, tenant.defaultWorkspaceId, null].sort());
    expect((await deliveries(onlySecond.id)).items.map((x) => x.workspace_id).sort()).toEqual([second.id, null].sort());
    expect(receiver.requests.every((r) => JSON.parse(r.body).tenant_id === tenant.id)).toBe(true);
    expect(receiver.requests).toHaveLength(5);
  });

  it('only events from its creation on; none while disabled (not queued for later either)', async () => {
    await emit(t, [event({ title: 'before' })]);
    t.clock.advance(S);
    const created = await hook();
    await emit(t, [event({ title: 'after' })]);
    await t.drain();
    await call(t.app, token, { method: 'PUT', url: `${base()}/${created.id}`, payload: { status: 'disabled' }, expect: 200 });
    t.clock.advance(S);
    await emit(t, [event({ title: 'while disabled' })]);
    await t.drain();
    t.clock.advance(S);
    await call(t.app, token, { method: 'PUT', url: `${base()}/${created.id}`, payload: { status: 'active' }, expect: 200 });
    await emit(t, [event({ title: 're-enabled' })]);
    await t.drain();
    expect(receiver.requests.map((r) => JSON.parse(r.body).data.finding.title)).toEqual(['after', 're-enabled']);
  });

  it('an event of a tenant without an active integration does not wake the dispatcher', async () => {
    const queued = () => t.deps.database.db.selectFrom('jobs').select('id').where('kind', '=', 'integrations.dispatch').where('status', '=', 'queued').execute();
    expect(await queued()).toEqual([]);
    await emit(t, [findingCreated(other.id, other.defaultWorkspaceId)]);
    expect(await queued()).toEqual([]);
    await hook();
    await emit(t, [event()]);
    expect(await queued()).toHaveLength(1);
    await emit(t, [event()]);
    expect(await queued()).toHaveLength(1);
    await t.drain();
    expect(receiver.requests).toHaveLength(2);
  });

  it('POST /integrations/{id}/test queues an integration.test delivery', async () => {
    const created = await hook('/test-me', { events: ['job.completed'] });
    const res = await call(t.app, token, { method: 'POST', url: `${base()}/${created.id}/test`, expect: 202 });
    expect(res.json()).toMatchObject({ status: 'pending', event_type: 'integration.test', attempt_count: 0 });
    await t.drain();
    expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ type: 'integration.test', tenant_id: tenant.id, data: { integration_id: created.id } });
    expect((await deliveries(created.id)).items[0]).toMatchObject({ status: 'succeeded' });
  });
});

describe('retries and failure', () => {
  it('attempts at 0 s, 30 s, 5 min, 30 min and 2 h; fails for good after the 5th; recording each attempt', async () => {
    const created = await hook();
    receiver.fallback = reply(500, `{"error":"${'x'.repeat(3000)}"}`);
    await emit(t, [event()]);
    const start = t.clock.now().getTime();
    await t.drain();
    const steps = [30, 300, 1800, 7200];
    let elapsed = 0;
    for (const [i, step] of steps.entries()) {
      expect(receiver.requests).toHaveLength(i + 1);
      const pending = (await deliveries(created.id)).items[0]!;
      expect(pending).toMatchObject({ status: 'pending', attempt_count: i + 1, next_attempt_at: new Date(start + (elapsed + step) * S).toISOString() });
      // One second early: nothing is due.
      t.clock.advance((step - 1) * S);
      await t.drain();
      expect(receiver.requests).toHaveLength(i + 1);
      t.clock.advance(S);
      elapsed += step;
      await t.drain();
    }
    expect(receiver.requests).toHaveLength(5);
    token = (await fresh(t, tenant.admin)).token;
    const failed = (await deliveries(created.id)).items[0]!;
    expect(failed).toMatchObject({ status: 'failed', attempt_count: 5, next_attempt_at: null, last_status_code: 500, last_error: 'HTTP 500' });
    expect(failed.completed_at).toBe(t.clock.now().toISOString());
    expect(failed.attempts.map((a: { number: number }) => a.number)).toEqual([1, 2, 3, 4, 5]);
    const offsets = failed.attempts.map((a: { attempted_at: string }) => (new Date(a.attempted_at).getTime() - start) / S);
    expect(offsets).toEqual([0, 30, 330, 2130, 9330]);
    for (const attempt of failed.attempts) {
      expect(attempt).toMatchObject({ outcome: 'failed', status_code: 500, error: 'HTTP 500' });
      expect(attempt.latency_ms).toBeGreaterThanOrEqual(0);
      // The first 1,024 bytes of the response, marked as cut.
      expect(attempt.response_body).toHaveLength(1025);
      expect(attempt.response_body.endsWith('…')).toBe(true);
    }
    expect(failed.attempts.at(-1).next_attempt_at).toBeNull();
    // Every attempt carried the same delivery id.
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    // 1 of 1 finished deliveries failed: above 50%, so the integration is disabled.
    const after = await integration(created.id);
    expect(after).toMatchObject({ status: 'disabled', disabled_reason: 'auto-disabled: 1 of the last 1 deliveries failed (100%, above 50%)' });
    const auditLog = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=integration.disabled&per_page=100`, expect: 200 })).json();
    expect(auditLog.items.find((e: { target_id: string }) => e.target_id === created.id)).toMatchObject({ actor_type: 'system', details: { failed: 1, window: 1 } });
  });

  it('a failed attempt followed by a success: delivered at the second attempt, 30 s later', async () => {
    const created = await hook();
    receiver.queue.push(reply(502, 'bad gateway'));
    await emit(t, [event()]);
    await t.drain();
    t.clock.advance(30 * S);
    await t.drain();
    const [delivery] = (await deliveries(created.id)).items;
    expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 2, last_error: null, last_status_code: 200 });
    expect(delivery!.attempts.map((a: { outcome: string; status_code: number }) => [a.outcome, a.status_code])).toEqual([
      ['failed', 502],
      ['succeeded', 200],
    ]);
    expect((await integration(created.id)).status).toBe('active');
  });

  it('a timeout (config.timeout_seconds) is a failed attempt', async () => {
    const created = await hook('/slow', { timeout_seconds: 1 });
    const held: Array<() => void> = [];
    receiver.queue.push((_req, res) => void held.push(() => res.end('late')));
    await emit(t, [event()]);
    const started = Date.now();
    await t.drain();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    for (const release of held) release();
    const [delivery] = (await deliveries(created.id)).items;
    expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: null, last_error: 'no HTTP response within 1 s' });
    expect(delivery!.attempts[0].latency_ms).toBeGreaterThanOrEqual(900);
  });

  it('a redirect is a failed attempt and is never followed', async () => {
    const created = await hook();
    receiver.queue.push(reply(302, '', { location: `${receiver.url}/elsewhere` }), reply(307, '', { location: 'http://169.254.169.254/latest/meta-data/' }));
    await emit(t, [event()]);
    await t.drain();
    t.clock.advance(30 * S);
    await t.drain();
    expect(paths()).toEqual(['/hook', '/hook']);
    const [delivery] = (await deliveries(created.id)).items;
    expect(delivery!.attempts.map((a: { status_code: number; error: string }) => [a.status_code, a.error])).toEqual([
      [302, `redirect not followed (302 to ${receiver.url}/elsewhere)`],
      [307, 'redirect not followed (307 to http://169.254.169.254/latest/meta-data/)'],
    ]);
  });
});

describe('receiver signals', () => {
  it('410 disables the integration at once; re-enabled by PUT, the failed event is redelivered with the same id', async () => {
    const created = await hook();
    receiver.queue.push(reply(410, 'gone'));
    await emit(t, [event({ title: 'first' })]);
    await t.drain();
    const [failed] = (await deliveries(created.id)).items;
    expect(failed).toMatchObject({ status: 'failed', attempt_count: 1, last_status_code: 410, last_error: 'the receiver answered 410 Gone' });
    expect(await integration(created.id)).toMatchObject({ status: 'disabled', disabled_reason: 'auto-disabled: the receiver answered 410 Gone' });
    const jobs = await t.deps.database.db.selectFrom('jobs').select('payload').where('kind', '=', 'integrations.deliver').where('status', '=', 'queued').execute();
    expect(jobs.filter((j) => j.payload.delivery_id === failed!.id)).toEqual([]);

    const retryUrl = `${base()}/${created.id}/deliveries/${failed!.id}/retry`;
    const whileDisabled = await call(t.app, token, { method: 'POST', url: retryUrl });
    expect(whileDisabled.statusCode).toBe(409);
    expect(whileDisabled.json().error.message).toBe('the integration is disabled: re-enable it with PUT first');
    await emit(t, [event({ title: 'while disabled' })]);
    await t.drain();
    expect((await deliveries(created.id)).total).toBe(1);
    t.clock.advance(S);

    await call(t.app, token, { method: 'PUT', url: `${base()}/${created.id}`, payload: { status: 'active' }, expect: 200 });
    await call(t.app, (await fresh(t, tenant.users['read-only'])).token, { method: 'POST', url: retryUrl, expect: 403 });
    const retried = await call(t.app, token, { method: 'POST', url: retryUrl, expect: 202 });
    expect(retried.json()).toMatchObject({ id: failed!.id, status: 'pending', completed_at: null });
    const again = await call(t.app, token, { method: 'POST', url: retryUrl });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.message).toBe('the delivery is still pending: its next attempt is already scheduled');
    await t.drain();
    const [delivered] = (await deliveries(created.id)).items;
    expect(delivered).toMatchObject({ status: 'succeeded', attempt_count: 2 });
    expect(delivered!.attempts.map((a: { number: number; status_code: number }) => [a.number, a.status_code])).toEqual([
      [1, 410],
      [2, 200],
    ]);
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([failed!.id, failed!.id]);
    expect(JSON.parse(receiver.requests[1]!.body).data.finding.title).toBe('first');
    await call(t.app, token, { method: 'POST', url: `${base()}/${created.id}/deliveries/${crypto.randomUUID()}/retry`, expect: 404 });
    const log = (await call(t.app, token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=integration.delivery_retried`, expect: 200 })).json();
    expect(log.items[0]).toMatchObject({ target_id: created.id, details: { delivery_id: failed!.id, previous_status: 'failed' } });
  });

  it('429 and 503 with Retry-After delay the next attempt (seconds or an HTTP date); without it the schedule applies', async () => {
    const created = await hook();
    const at = (seconds: number) => new Date(t.clock.now().getTime() + seconds * S).toUTCString();
    receiver.queue.push(reply(429, 'slow down', { 'retry-after': '120' }));
    await emit(t, [event()]);
    await t.drain();
    let [delivery] = (await deliveries(created.id)).items;
    expect(delivery!.next_attempt_at).toBe(new Date(t.clock.now().getTime() + 120 * S).toISOString());
    t.clock.advance(30 * S);
    await t.drain();
    expect(receiver.requests).toHaveLength(1);
    t.clock.advance(90 * S);
    receiver.queue.push((req, res) => reply(503, 'maintenance', { 'retry-after': at(600) })(req, res));
    await t.drain();
    expect(receiver.requests).toHaveLength(2);
    [delivery] = (await deliveries(created.id)).items;
    expect(delivery!.next_attempt_at).toBe(new Date(t.clock.now().getTime() + 600 * S).toISOString());
    t.clock.advance(600 * S);
    receiver.queue.push(reply(503, 'no header'));
    await t.drain();
    [delivery] = (await deliveries(created.id)).items;
    // The third failure: the schedule's 30 min.
    expect(delivery!.next_attempt_at).toBe(new Date(t.clock.now().getTime() + 1800 * S).toISOString());
    expect(delivery!.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([429, 503, 503]);
  });
});

describe('redelivery and listing', () => {
  it('lists deliveries newest first, paged and filtered by status; 404 for another integration', async () => {
    const created = await hook();
    const second = await hook('/second');
    receiver.fallback = (req, res) => reply(req.url === '/second' ? 500 : 200)(req, res);
    for (let i = 0; i < 3; i++) {
      await emit(t, [event({ title: `event ${i}` })]);
      t.clock.advance(S);
    }
    await t.drain();
    const page1 = await deliveries(created.id, '?per_page=2');
    expect(page1).toMatchObject({ total: 3, page: 1, per_page: 2, total_pages: 2 });
    const page2 = await deliveries(created.id, '?per_page=2&page=2');
    const titles = [...page1.items, ...page2.items].map((d) => d.created_at);
    expect(titles).toEqual([...titles].sort().reverse());
    expect((await deliveries(second.id, '?status=pending')).total).toBe(3);
    expect((await deliveries(second.id, '?status=succeeded')).total).toBe(0);
    const foreign = (await deliveries(second.id)).items[0]!;
    await call(t.app, token, { url: `${base()}/${created.id}/deliveries/${foreign.id}`, expect: 404 });
    await call(t.app, token, { url: `${base()}/${crypto.randomUUID()}/deliveries`, expect: 404 });
  });
});

describe('end to end from an audit', () => {
  it("an audit's finding.created and, after the fix, finding.resolved reach the webhooks whose filters they pass", async () => {
    const rule = 'aws-s3-bucket-versioning';
    const medium = await hook('/medium', { filters: { severity: ['MEDIUM'], resource_types: ['aws.s3.bucket'] } });
    const critical = await hook('/critical', { filters: { severity: ['CRITICAL'] } });
    await putNodes(t, token, tenant.id, [fixtureNode(rule, 'violating', 'e2e-bucket')]);
    await audit(t, token, tenant.id);
    await t.drain();
    const created = receiver.requests.filter((r) => r.url === '/medium').map((r) => JSON.parse(r.body));
    const ours = created.filter((e) => e.type === 'finding.created' && e.data.finding.rule_id === rule);
    expect(ours).toHaveLength(1);
    expect(ours[0].data.finding).toMatchObject({ severity: 'MEDIUM', resource_type: 'aws.s3.bucket', framework: 'nist-800-53' });
    const findingId = ours[0].data.finding.id;
    const createdIds = created.filter((e) => e.type === 'finding.created').map((e) => e.data.finding.id);
    expect(created.filter((e) => e.type === 'finding.created').every((e) => e.data.finding.severity === 'MEDIUM')).toBe(true);

    receiver.requests.length = 0;
    await putNodes(t, token, tenant.id, [fixtureNode(rule, 'compliant', 'e2e-bucket')]);
    await audit(t, token, tenant.id);
    await t.drain();
    // finding.resolved carries only the finding id: its severity and resource type were looked up.
    const resolved = receiver.requests
      .filter((r) => r.url === '/medium')
      .map((r) => JSON.parse(r.body))
      .filter((e) => e.type === 'finding.resolved');
    expect(resolved.map((e) => e.data.finding_id)).toContain(findingId);
    expect(resolved.every((e) => createdIds.includes(e.data.finding_id))).toBe(true);
    expect(receiver.requests.filter((r) => r.url === '/critical' && JSON.parse(r.body).type.startsWith('finding.'))).toEqual([]);
    expect((await deliveries(critical.id)).items.every((d) => d.event_type === 'compliance.score_changed')).toBe(true);
    expect((await deliveries(medium.id)).items.every((d) => d.status === 'succeeded')).toBe(true);
  });
});
