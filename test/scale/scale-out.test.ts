import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabaseForChild, dbKind } from '../harness/database.js';
import { startServiceProcess, type ServiceProcess } from '../harness/service-process.js';
import { api, openSse, until } from '../harness/remote.js';
import { startReceiver, type Receiver } from '../integrations/helpers.js';
import { fixtureNode, fixtures } from '../harness/compliance.js';

/**
 * Scale-out mode as deployed: two API processes and two worker processes (each also a scheduler) of
 * the real CLI against one PostgreSQL database, with Redis for the rate limits when REDIS_URL is set.
 * Shows that rate limits hold across API processes, SSE clients on one API process receive events
 * produced through the other, each job and each webhook delivery runs once, and schedules fire once.
 * PostgreSQL only: PGlite is one process's embedded database.
 */
const ADMIN = { username: 'scale-admin', password: 'scale-admin-password-1' };

describe.runIf(dbKind() === 'postgres')('scale-out: 2 API and 2 worker processes on one PostgreSQL', () => {
  const processes: ServiceProcess[] = [];
  let db: { url: string; dispose(): Promise<void> };
  let sql: pg.Client;
  let receiver: Receiver;
  let api1: string;
  let api2: string;
  let startedAt: number;

  beforeAll(async () => {
    db = await createDatabaseForChild();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    receiver = await startReceiver();
    const env = {
      DATABASE_URL: db.url,
      CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username,
      CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password,
      CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      CONTROLGRAPH_WORKER_POLL_MS: '200',
      CONTROLGRAPH_VULNDB_SEED: 'off',
      LOG_LEVEL: 'warn',
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    };
    startedAt = Date.now();
    // Started one after the other: the first runs the bootstrap, the others find it done.
    for (const role of ['api', 'api', 'worker,scheduler', 'worker,scheduler']) processes.push(await startServiceProcess(env, ['--role', role]));
    api1 = processes[0]!.base;
    api2 = processes[1]!.base;
  }, 600_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await sql?.end();
    await receiver?.close();
    await db?.dispose();
  });

  /** A tenant of the plan with a tenant-admin logged in (through API process 1). */
  async function tenantWithAdmin(plan: 'free' | 'enterprise', name: string) {
    const system = await api(api1, null, 'POST', '/api/v1/auth/token', ADMIN);
    const tenant = await api(api1, system.token, 'POST', '/api/v1/account/tenants', { name, plan });
    const inTenant = await api(api1, system.token, 'POST', '/api/v1/auth/select-tenant', { tenant_id: tenant.id });
    const user = { username: `${name}-admin`, password: 'tenant-admin-password-1' };
    await api(api1, inTenant.token, 'POST', `/api/v1/tenants/${tenant.id}/users`, { ...user, role: 'tenant-admin' });
    const session = await api(api2, null, 'POST', '/api/v1/auth/token', user);
    const own = session.tenant_id === tenant.id ? session : await api(api2, session.token, 'POST', '/api/v1/auth/select-tenant', { tenant_id: tenant.id });
    return { id: tenant.id as string, token: own.token as string };
  }

  it('an audit through API 2 reaches the SSE client on API 1 and the webhook receiver, each once', async () => {
    const tenant = await tenantWithAdmin('enterprise', 'scale-events');
    const base = `/api/v1/tenants/${tenant.id}`;
    await api(api1, tenant.token, 'POST', `${base}/integrations`, {
      name: 'receiver',
      type: 'webhook',
      config: { url: `${receiver.url}/hook`, secret: 'scale-out-webhook-secret-0123456789', events: ['finding.created'] },
    });
    const stream = await openSse(`${api1}${base}/findings/stream`, tenant.token);
    try {
      const nodes = [...fixtures.keys()].slice(0, 6).map((ruleId, i) => fixtureNode(ruleId, 'violating', `scale-${i}`));
      await api(api2, tenant.token, 'POST', `${base}/nodes`, { nodes });
      const run = await api(api2, tenant.token, 'POST', `${base}/findings/run`, {});
      const finished = await until(
        'the audit',
        async () => {
          const { rows } = await sql.query('SELECT status FROM jobs WHERE id = $1', [run.job_id]);
          return ['succeeded', 'failed'].includes(rows[0]?.status) ? rows[0].status : undefined;
        },
        120_000,
        200,
      );
      expect(finished).toBe('succeeded');
      const { rows: created } = await sql.query("SELECT id, seq, data->'finding'->>'id' AS finding_id FROM outbox_events WHERE tenant_id = $1 AND type = 'finding.created'", [
        tenant.id,
      ]);
      expect(created.length).toBeGreaterThanOrEqual(6);

      // Live on the other API process, every finding once. Identified by the finding: the `id:` line is
      // the stream position, which an event committed late below it repeats (the audit writes its
      // batches two at a time, so their events can become visible out of seq order).
      await until('SSE events on API 1', async () => (stream.messages.filter((m) => m.data.event === 'finding.created').length >= created.length ? true : undefined), 60_000);
      const messages = stream.messages.filter((m) => m.data.event === 'finding.created');
      const streamed = messages.map((m) => m.data.finding.id as string);
      expect(streamed.sort()).toEqual(created.map((r) => r.finding_id as string).sort());
      const positions = messages.map((m) => Number(m.id));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(Math.max(...positions)).toBe(Math.max(...created.map((r) => Number(r.seq))));

      // Delivered by one of the two workers, every event once.
      await until('webhook deliveries', async () => (receiver.requests.length >= created.length ? true : undefined), 60_000, 200);
      await new Promise((r) => setTimeout(r, 1_500)); // room for a duplicate to show up
      const delivered = receiver.requests.map((r) => JSON.parse(r.body).id as string);
      expect(delivered.sort()).toEqual(created.map((r) => r.id as string).sort());
      expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(receiver.requests.length);
    } finally {
      stream.close();
    }
  }, 300_000);

  it('each job ran once: every finished job succeeded on its first attempt', async () => {
    const { rows } = await sql.query("SELECT kind, status, attempts, lease_owner FROM jobs WHERE status IN ('succeeded', 'failed')");
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row, `${row.kind}`).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('schedules fire once however many schedulers run', async () => {
    const elapsed = Date.now() - startedAt;
    const { rows: schedules } = await sql.query('SELECT name, kind, interval_ms FROM job_schedules');
    expect(schedules.length).toBeGreaterThan(3);
    for (const schedule of schedules) {
      const { rows } = await sql.query('SELECT count(*)::int AS n FROM jobs WHERE dedupe_key = $1', [`schedule:${schedule.name}`]);
      // Each fires at start, then once per interval: two schedulers firing would double it.
      const allowed = Math.floor(elapsed / Number(schedule.interval_ms)) + 1;
      expect(rows[0].n, schedule.name).toBeGreaterThanOrEqual(1);
      expect(rows[0].n, schedule.name).toBeLessThanOrEqual(allowed);
    }
  });

  it("a tenant's rate limit holds across both API processes", async () => {
    // Free plan: a burst of 10, refilled at one per second. Two separate buckets would allow ~20.
    const tenant = await tenantWithAdmin('free', 'scale-limits');
    const started = Date.now();
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetch(`${i % 2 ? api2 : api1}/api/v1/tenants/${tenant.id}/nodes`, { headers: { authorization: `Bearer ${tenant.token}` } }).then((r) => r.status),
      ),
    );
    const seconds = (Date.now() - started) / 1000;
    const allowed = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(allowed).toBeGreaterThanOrEqual(1);
    expect(allowed).toBeLessThanOrEqual(10 + Math.ceil(seconds) + 1);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
  }, 120_000);
});
