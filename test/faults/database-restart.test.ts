import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKind } from '../harness/database.js';
import { startServiceProcess, type ServiceProcess } from '../harness/service-process.js';
import { api, until } from '../harness/remote.js';
import { startWriteLoad, untilAuditsDrain } from '../harness/write-load.js';
import { postgresBinDir, startPrivatePostgres, type PrivatePostgres } from '../harness/private-postgres.js';
import { assertNoFaultDamage, expectHonestHealth, failingControlsWithoutEvent, watchHealth } from '../harness/fault-checks.js';
import { loadMigrations } from '../../src/platform/db/migrator.js';

/**
 * Fault: PostgreSQL itself restarts under load. database-outage.test.ts plays an outage with a proxy
 * that drops connections; here the server really goes down, on a private cluster of this test (the
 * machine's shared server keeps serving the other tests): `pg_ctl restart -m fast`, which ends every
 * live session with an admin-shutdown error (57P01) and refuses connections while it shuts down and
 * starts, then `pg_ctl stop -m fast` and a start a few seconds later, so that the downtime is long
 * enough for /healthz to be seen saying so. The service process (which migrated the empty cluster at
 * start) is under write and audit load throughout and is never restarted. After: /healthz was honest
 * at every sample, every acknowledged write is stored, every acknowledged audit finished, nothing is
 * stuck past its lease, no outbox state change is duplicated and none is missing.
 */
const ADMIN = { username: 'restart-admin', password: 'restart-admin-password-1' };
const bin = postgresBinDir();

describe.runIf(dbKind() === 'postgres')('fault: PostgreSQL restarted under load (a private cluster)', () => {
  let cluster: PrivatePostgres | undefined;
  let service: ServiceProcess | undefined;
  let direct: pg.Pool | undefined;

  beforeAll(async () => {
    if (!bin) return;
    cluster = await startPrivatePostgres(bin);
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE controlgraph').finally(() => admin.end());
    // The empty database is migrated by the service itself as it starts.
    service = await startServiceProcess({
      DATABASE_URL: cluster.url('controlgraph'),
      CONTROLGRAPH_ADMIN_USERNAME: ADMIN.username,
      CONTROLGRAPH_ADMIN_PASSWORD: ADMIN.password,
      CONTROLGRAPH_RATE_LIMITS: 'off',
      CONTROLGRAPH_WORKER_POLL_MS: '100',
      CONTROLGRAPH_VULNDB_SEED: 'off',
      // Errors only: the test reads which jobs' outcomes could not be recorded during the outage.
      LOG_LEVEL: 'error',
    });
    // The test's own view: a pool, so that its connections also come back after each restart.
    direct = new pg.Pool({ connectionString: cluster.url('controlgraph'), max: 2 });
    direct.on('error', () => undefined);
  }, 300_000);

  afterAll(async () => {
    await service?.stop('SIGKILL');
    await direct?.end().catch(() => undefined);
    await cluster?.dispose();
  });

  it('pg_ctl restart -m fast and stop/start: honest /healthz, recovery without a restart, no acknowledged write lost', async (ctx) => {
    if (!bin) ctx.skip('no PostgreSQL server binaries (initdb, pg_ctl) on this machine: install them or set POSTGRES_BIN_DIR');
    const pgc = cluster!;
    const svc = service!;
    const db = direct!;
    const pid = svc.child.pid;
    const migrated = await db.query('SELECT count(*)::int AS n FROM schema_migrations');
    expect(migrated.rows[0].n, 'the service migrated the empty cluster').toBe(loadMigrations().length);

    const session = await api(svc.base, null, 'POST', '/api/v1/auth/token', ADMIN);
    const tenantId: string = session.tenant_id;
    const tenant = `/api/v1/tenants/${tenantId}`;

    // Writers and auditors keep going through both restarts.
    const load = startWriteLoad(svc.base, session, 'restart');
    const { acknowledged, audits } = load;
    const writesAfter = async (what: string) => {
      const before = acknowledged.length;
      await until(
        what,
        async () => {
          if (svc.child.exitCode !== null) throw new Error(`the service died:\n${svc.output().slice(-3000)}`);
          return acknowledged.length >= before + 200 ? true : undefined;
        },
        60_000,
      );
    };

    // Under way before the fault: writes, and audits finished (later ones run while it strikes).
    await until(
      'writes and a finished audit before the restart',
      async () => {
        if (acknowledged.length < 600 || audits.size === 0) return undefined;
        const { rows } = await db.query("SELECT 1 FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'succeeded'", [[...audits]]);
        return rows.length ? true : undefined;
      },
      60_000,
      250,
    );
    const health = watchHealth(svc.base, 100);

    // 1. A fast restart: live sessions get 57P01, connections are refused while it goes down and up.
    const restartStarted = Date.now();
    await pgc.ctl('-m', 'fast', 'restart');
    const restartTook = Date.now() - restartStarted;
    await until('/healthz to recover after the restart', async () => ((await fetch(`${svc.base}/healthz`)).status === 200 ? true : undefined), 30_000, 100);
    await writesAfter('writes after the restart');

    // 2. Down for a few seconds: /healthz must say so while it lasts.
    await pgc.ctl('-m', 'fast', 'stop');
    const down = await until(
      '/healthz to report the database down',
      async () => {
        const res = await fetch(`${svc.base}/healthz`).catch(() => null);
        return res?.status === 503 ? await res.json() : undefined;
      },
      30_000,
    );
    expect(down).toEqual({ status: 'degraded', db_connected: false });
    await new Promise((r) => setTimeout(r, 3_000));
    await pgc.ctl('start');
    await until('/healthz to recover after the start', async () => ((await fetch(`${svc.base}/healthz`)).status === 200 ? true : undefined), 30_000, 100);
    await writesAfter('writes after the start');
    await load.stop();
    const samples = await health.stop();

    // The same process throughout, and the server really ended its sessions (not a dropped socket).
    expect(svc.child.exitCode).toBeNull();
    expect(svc.child.pid).toBe(pid);
    expect(pgc.log()).toMatch(/terminating connection due to administrator command/);
    // Every sample told the truth (200 connected or 503 degraded), and it said 503 while down.
    expectHonestHealth(samples);
    expect(samples.some((s) => s.status === 503)).toBe(true);
    // Failures during the restarts were 503s (or refused requests), never a 500.
    const statuses = [...load.writeStatuses.keys(), ...load.auditStatuses.keys()];
    expect(statuses.filter((s) => ![200, 201, 202, 503, 0].includes(s))).toEqual([]);
    // The process's LISTEN connection came back (wake-ups for workers and event streams).
    await until(
      'the notifier to listen again',
      async () => {
        const { rows } = await db.query("SELECT 1 FROM pg_stat_activity WHERE datname = 'controlgraph' AND query ~ '^LISTEN '");
        return rows.length ? true : undefined;
      },
      15_000,
      250,
    );

    const stored = await db.query('SELECT id FROM nodes WHERE tenant_id = $1', [tenantId]);
    const ids = new Set(stored.rows.map((r) => r.id as string));
    expect(
      acknowledged.filter((id) => !ids.has(id)),
      'acknowledged writes lost',
    ).toEqual([]);

    // One more audit after the load: the queue drains, every acknowledged audit finished, and every
    // stored node has its finding with exactly one finding.created.
    const last = await api(svc.base, session.token, 'POST', `${tenant}/findings/run`, {});
    audits.add(last.job_id);
    // The worker retries recording a job's outcome while the server is away (worker.ts,
    // persistOutcome); only one it gave up on keeps its lease until it runs out (2 minutes for an
    // audit). Should that happen, the test ends those leases instead of waiting, exactly what the
    // expiry does, and the same process takes them over.
    const abandoned = svc
      .output()
      .split('\n')
      .flatMap((line) => {
        try {
          const entry = JSON.parse(line);
          return entry.msg === 'job outcome could not be recorded' ? [entry.job_id as string] : [];
        } catch {
          return [];
        }
      });
    if (abandoned.length) {
      const ended = await db.query(
        "UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = ANY($1::uuid[]) AND status = 'running' AND lease_expires_at > now() RETURNING kind",
        [abandoned],
      );
      await ctx.annotate(`leases ended early for ${ended.rows.map((r) => r.kind).join(', ') || 'none'} (outcome not recorded during the outage)`);
    }
    await until(
      'every acknowledged audit to finish',
      async () => {
        const { rows } = await db.query("SELECT id, status, last_error FROM jobs WHERE id = ANY($1::uuid[]) AND status <> 'succeeded'", [[...audits]]);
        const failed = rows.filter((r) => r.status === 'failed');
        if (failed.length) throw new Error(`audits failed: ${JSON.stringify(failed)}`);
        return rows.length === 0 ? true : undefined;
      },
      60_000,
      250,
    );
    // The last request may have joined an audit already running; its follow-up run (another job)
    // audits what came after. The queue drains: nothing is left queued or running.
    await untilAuditsDrain(db, 60_000, 250);
    const missing = await db.query(
      `SELECT f.id FROM findings f WHERE f.tenant_id = $1 AND NOT EXISTS (
         SELECT 1 FROM outbox_events e WHERE e.tenant_id = $1 AND e.type = 'finding.created' AND e.data->'finding'->>'id' = f.id)`,
      [tenantId],
    );
    expect(missing.rows, 'findings without their finding.created event').toEqual([]);
    const findings = await db.query('SELECT count(DISTINCT resource_id)::int AS n FROM findings WHERE tenant_id = $1', [tenantId]);
    expect(findings.rows[0].n, 'every stored node was audited').toBe(ids.size);
    await assertNoFaultDamage(db, tenantId, { health: svc.base });
    // An audit retried after a failed attempt keeps the control events of what that attempt
    // committed (it compares with the run's first baseline; worker-kill.test.ts found the bug).
    const lostControls = await failingControlsWithoutEvent(db, svc.base, session.token, tenantId);
    expect(lostControls, 'failing controls without their control_failed event').toEqual([]);
    await ctx.annotate(
      `restart took ${restartTook} ms; ${acknowledged.length} nodes acknowledged; ${audits.size} audits; /healthz samples: ${samples.length} (${samples.filter((s) => s.status === 503).length} × 503); failing controls without their event: ${lostControls.length}`,
    );
  }, 600_000);
});
