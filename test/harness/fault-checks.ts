import { CompiledQuery, type Kysely } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

/**
 * What every fault test checks after the fault (issue 14): no job is left running past its lease,
 * no state change reached the outbox twice (an idempotency id may repeat on the wire, a state change
 * may not), and /healthz tells the truth. Works on a pg client (process tests, PostgreSQL) and on the
 * app's Kysely handle (in-process tests, PGlite or PostgreSQL).
 */
export type FaultDb = Kysely<any> | { query(text: string, params?: unknown[]): Promise<{ rows: any[] }> };

async function rows(db: FaultDb, text: string, params: unknown[] = []): Promise<any[]> {
  if ('executeQuery' in db) return (await db.executeQuery(CompiledQuery.raw(text, params))).rows as any[];
  return (await db.query(text, params)).rows;
}

export interface FaultCheckOptions {
  /**
   * The service's idea of now (an in-process test's manual clock); by default the database's now().
   */
  now?: Date;
  /**
   * A lease that ran out less than this long ago is not stuck yet: a live worker takes such a job
   * over at its next poll, and the reaper fails a job out of attempts every 5 s. Default 10 s.
   */
  leaseGraceMs?: number;
  /** Also checks that /healthz of this service (base URL or app) answers 200, database connected. */
  health?: string | FastifyInstance;
}

/** Jobs running past their lease (by more than the grace), as readable lines. */
export async function jobsPastLease(db: FaultDb, options: Pick<FaultCheckOptions, 'now' | 'leaseGraceMs'> = {}): Promise<string[]> {
  const graceSeconds = (options.leaseGraceMs ?? 10_000) / 1000;
  const found = options.now
    ? await rows(db, "SELECT id, kind, attempts, lease_owner FROM jobs WHERE status = 'running' AND lease_expires_at < $1::timestamptz - make_interval(secs => $2)", [
        options.now.toISOString(),
        graceSeconds,
      ])
    : await rows(db, "SELECT id, kind, attempts, lease_owner FROM jobs WHERE status = 'running' AND lease_expires_at < now() - make_interval(secs => $1)", [graceSeconds]);
  return found.map((j) => `job ${j.kind} ${j.id} (attempt ${j.attempts}, ${j.lease_owner}) is running past its lease`);
}

/** The state changes of a finding, a control, a report or a discovery job, in outbox order. */
const STATEFUL_TYPES = [
  'finding.created',
  'finding.reopened',
  'finding.resolved',
  'finding.severity_changed',
  'finding.risk_accepted',
  'finding.risk_acceptance_ended',
  'compliance.control_failed',
  'compliance.control_passed',
  'report.generated',
  'report.failed',
];

/**
 * Outbox state changes recorded twice for a tenant, as readable lines. A state change is a
 * transition of one thing: a finding is created once, then alternates resolved / reopened (never
 * resolved twice in a row); a control alternates failing / passing; a severity change is not
 * repeated; an acceptance starts and ends once per finding; a report and a discovery job reach each
 * state once. A retried job that replays a committed step shows up here.
 */
export async function duplicatedStateChanges(db: FaultDb, tenantId: string): Promise<string[]> {
  const events = await rows(
    db,
    "SELECT seq, type, workspace_id, data FROM outbox_events WHERE tenant_id = $1 AND (type = ANY($2::text[]) OR type LIKE 'discovery.%') ORDER BY seq",
    [tenantId, STATEFUL_TYPES],
  );
  const problems: string[] = [];
  const last = new Map<string, { state: string; seq: number }>();
  const seen = new Map<string, number>();
  /** `key` moves to `state`; the same state twice in a row is a duplicate. */
  const transition = (key: string, state: string, seq: number) => {
    const previous = last.get(key);
    if (previous?.state === state) problems.push(`${key}: ${state} at seq ${previous.seq} and again at seq ${seq}`);
    last.set(key, { state, seq });
  };
  /** `key` may happen once. */
  const once = (key: string, seq: number) => {
    const previous = seen.get(key);
    if (previous !== undefined) problems.push(`${key}: at seq ${previous} and again at seq ${seq}`);
    else seen.set(key, seq);
  };
  for (const e of events) {
    const data = typeof e.data === 'string' ? JSON.parse(e.data) : e.data;
    const seq = Number(e.seq);
    const ws = e.workspace_id as string;
    const findingId = (data.finding?.id ?? data.finding_id) as string | undefined;
    switch (e.type) {
      case 'finding.created':
        once(`finding ${ws}/${findingId} created`, seq);
        transition(`finding ${ws}/${findingId}`, 'open', seq);
        break;
      case 'finding.reopened':
        transition(`finding ${ws}/${findingId}`, 'open', seq);
        break;
      case 'finding.resolved':
        transition(`finding ${ws}/${findingId}`, 'resolved', seq);
        break;
      case 'finding.severity_changed':
        transition(`finding ${ws}/${findingId} severity`, `${data.previous_severity}->${data.severity}`, seq);
        break;
      case 'finding.risk_accepted':
        once(`finding ${ws}/${findingId} accepted by ${data.acceptance_id}`, seq);
        break;
      case 'finding.risk_acceptance_ended':
        once(`finding ${ws}/${findingId} acceptance ${data.acceptance_id} ended`, seq);
        break;
      case 'compliance.control_failed':
      case 'compliance.control_passed':
        transition(`control ${ws}/${data.framework}/${data.control_id}`, e.type, seq);
        break;
      case 'report.generated':
      case 'report.failed':
        once(`report ${data.report?.id} finished`, seq);
        break;
      default:
        // discovery.* job events: each state of a job once.
        once(`${e.type} of discovery job ${data.job?.id}`, seq);
    }
  }
  return problems;
}

/** /healthz answers 200 with the database connected. */
export async function expectHealthy(target: string | FastifyInstance): Promise<void> {
  const { status, body } =
    typeof target === 'string'
      ? await fetch(`${target}/healthz`).then(async (r) => ({ status: r.status, body: await r.json() }))
      : await target.inject({ url: '/healthz' }).then((r) => ({ status: r.statusCode, body: r.json() }));
  expect({ status, body }, '/healthz after the fault').toEqual({ status: 200, body: { status: 'ok', db_connected: true } });
}

/** The after-fault checks: no job stuck past its lease, no duplicated state change, /healthz healthy. */
export async function assertNoFaultDamage(db: FaultDb, tenantId: string, options: FaultCheckOptions = {}): Promise<void> {
  expect(await jobsPastLease(db, options), 'jobs stuck in running past their lease').toEqual([]);
  expect(await duplicatedStateChanges(db, tenantId), 'outbox state changes recorded twice').toEqual([]);
  if (options.health) await expectHealthy(options.health);
}

export interface HealthSample {
  at: number;
  /** 0 when the request failed (refused, reset). */
  status: number;
  body: unknown;
}

/**
 * Polls /healthz in the background for the whole fault, so "honest throughout" is checked at every
 * moment and not only at the end. `stop()` returns the samples.
 */
export function watchHealth(base: string, everyMs = 200) {
  const samples: HealthSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = Date.now();
      const sample = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(10_000) })
        .then(async (r) => ({ at, status: r.status, body: await r.json().catch(() => null) }))
        .catch(() => ({ at, status: 0, body: null }));
      samples.push(sample);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    samples,
    async stop(): Promise<HealthSample[]> {
      running = false;
      await loop;
      return samples;
    },
  };
}

/**
 * Each sample either says the database is connected (200) or that it is not (503, degraded), never
 * anything else; when `alwaysUp`, the database was up throughout and every sample must say so.
 */
export function expectHonestHealth(samples: HealthSample[], options: { alwaysUp?: boolean } = {}): void {
  expect(samples.length, '/healthz was sampled').toBeGreaterThan(0);
  const says = (s: HealthSample, status: number, connected: boolean) =>
    s.status === status && (s.body as any)?.status === (connected ? 'ok' : 'degraded') && (s.body as any)?.db_connected === connected;
  const wrong = samples.filter((s) => !says(s, 200, true) && (options.alwaysUp || !says(s, 503, false)));
  expect(
    wrong.map((s) => ({ at: new Date(s.at).toISOString(), status: s.status, body: s.body })),
    '/healthz answers during the fault',
  ).toEqual([]);
}

/**
 * Controls the service reports failing (GET /controls/gaps) whose last compliance.control_* event in
 * the outbox is not control_failed: a state change that never reached the outbox. Holds where the
 * control states change through audits only (no acceptances or attestations in the test).
 */
export async function failingControlsWithoutEvent(db: FaultDb, base: string, token: string, tenantId: string): Promise<string[]> {
  const failing: string[] = [];
  for (let page = 1; ; page++) {
    const res = await fetch(`${base}/api/v1/tenants/${tenantId}/controls/gaps?per_page=100&page=${page}`, { headers: { authorization: `Bearer ${token}` } });
    if (!res.ok) throw new Error(`GET /controls/gaps: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { items: Array<{ framework: string; control_id: string; status: string }>; total: number };
    failing.push(...body.items.filter((g) => g.status === 'failing').map((g) => `${g.framework}/${g.control_id}`));
    if (page * 100 >= body.total || body.items.length === 0) break;
  }
  const events = await rows(
    db,
    "SELECT type, data->>'framework' AS framework, data->>'control_id' AS control_id FROM outbox_events WHERE tenant_id = $1 AND type IN ('compliance.control_failed', 'compliance.control_passed') ORDER BY seq",
    [tenantId],
  );
  const last = new Map(events.map((e) => [`${e.framework}/${e.control_id}`, e.type as string]));
  return failing.filter((key) => last.get(key) !== 'compliance.control_failed').map((key) => `control ${key} is failing; last event: ${last.get(key) ?? 'none'}`);
}
