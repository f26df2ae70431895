import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabaseForChild, dbKind } from '../harness/database.js';
import { startServiceProcess, type ServiceProcess } from '../harness/service-process.js';
import { startTcpProxy } from '../harness/tcp-proxy.js';
import { api, until } from '../harness/remote.js';
import { startWriteLoad, untilAuditsDrain } from '../harness/write-load.js';
import { assertNoFaultDamage, expectHonestHealth, watchHealth } from '../harness/fault-checks.js';

/**
 * Fault: the database goes away under load and comes back, as a PostgreSQL restart looks to the
 * service (every connection dropped, new ones refused for a while). Played by a TCP proxy between the
 * service process and PostgreSQL, so the machine's shared server keeps serving other tests. While it
 * is down /healthz says so (503); afterwards the same process recovers without a restart, every write
 * it acknowledged is there, and no job is left running past its lease.
 */
const ADMIN = { username: 'outage-admin', password: 'outage-admin-password-1' };

describe.runIf(dbKind() === 'postgres')('fault: database outage under load', () => {
  let db: { url: string; dispose(): Promise<void> };
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
  let service: ServiceProcess;
  let direct: pg.Client;

  beforeAll(async () => {
    db = await createDatabaseForChild();
    direct = new pg.Client({ connectionString: db.url });
    await direct.connect();
    const url = new URL(db.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${proxy.port}`;
    service = await startServiceProcess({
      DATABASE_URL: url.toString(),
      CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username,
      CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password,
      CONTROLGRAPH_RATE_LIMITS: 'off',
      CONTROLGRAPH_WORKER_POLL_MS: '100',
      CONTROLGRAPH_VULNDB_SEED: 'off',
      LOG_LEVEL: 'fatal',
    });
  }, 600_000);

  afterAll(async () => {
    await service?.stop('SIGKILL');
    await proxy?.close();
    await direct?.end();
    await db?.dispose();
  });

  it('is honest while down, recovers without a restart, and loses no acknowledged write', async () => {
    const session = await api(service.base, null, 'POST', '/api/v1/auth/token', ADMIN);
    // Writers and auditors keep going through the outage.
    const load = startWriteLoad(service.base, session, 'outage');
    const { acknowledged } = load;

    await until('writes before the outage', async () => (acknowledged.length >= 200 ? true : undefined), 60_000);
    const health = watchHealth(service.base);
    proxy.cut();
    const down = await until(
      '/healthz to report the outage',
      async () => {
        if (service.child.exitCode !== null) throw new Error(`the service died:\n${service.output().slice(-3000)}`);
        const res = await fetch(`${service.base}/healthz`).catch(() => null);
        return res?.status === 503 ? await res.json() : undefined;
      },
      30_000,
    );
    expect(down).toEqual({ status: 'degraded', db_connected: false });
    await new Promise((r) => setTimeout(r, 3_000));
    proxy.restore();
    await until('/healthz to recover', async () => ((await fetch(`${service.base}/healthz`)).status === 200 ? true : undefined), 60_000, 200);
    const before = acknowledged.length;
    await until('writes after the outage', async () => (acknowledged.length >= before + 200 ? true : undefined), 60_000);
    await load.stop();
    // Every /healthz answer throughout said either connected (200) or not (503), nothing else.
    expectHonestHealth(await health.stop());

    // Failures during the outage were 503s (or refused requests), never anything else.
    expect([...load.writeStatuses.keys()].filter((s) => ![200, 201, 503, 0].includes(s))).toEqual([]);
    const stored = await direct.query('SELECT id FROM nodes WHERE tenant_id = $1', [session.tenant_id]);
    const ids = new Set(stored.rows.map((r) => r.id as string));
    expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);

    // The audits queued around the outage all finish; nothing stays running past its lease.
    await untilAuditsDrain(direct, 180_000, 500);
    const stuck = await direct.query("SELECT kind FROM jobs WHERE status = 'running' AND lease_expires_at < now()");
    expect(stuck.rows).toEqual([]);
    const events = await direct.query(
      "SELECT count(*)::int AS n, count(DISTINCT data->'finding'->>'id')::int AS distinct_n FROM outbox_events WHERE tenant_id = $1 AND type = 'finding.created'",
      [session.tenant_id],
    );
    expect(events.rows[0].n).toBe(events.rows[0].distinct_n);
    await assertNoFaultDamage(direct, session.tenant_id, { health: service.base });
  }, 600_000);
});
