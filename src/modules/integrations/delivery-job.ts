import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import type { JobContext, JobDefinition } from '../../platform/jobs/definition.js';
import type { JobRow } from '../../platform/jobs/queue.js';
import { JOBS_CHANNEL } from '../../platform/jobs/queue.js';
import { writeAudit, type AuditActor } from '../../platform/audit/audit-log.js';
import { joinSecrets, type IntegrationConfig } from './config.js';
import { DELIVER_JOB, DELIVER_JOB_ATTEMPTS } from './dispatcher.js';
import { FormatError, prepare } from './formatters/index.js';
import type { Envelope } from './formatters/summary.js';
import type { HttpClient } from './http-client.js';
import { sendMail, type SmtpConfig } from './mailer.js';
import { secretBoxFor, SecretError } from '../../platform/crypto/secret-box.js';
import type { DeliverySettings } from './settings.js';
import type { DeliveryRow, IntegrationRow } from './tables.js';

/**
 * One delivery attempt per queue job. `run` makes the request and returns what happened; the outcome
 * is recorded in `onSucceeded`, in the transaction that completes the job: the attempt row, the
 * delivery's new state, the job of the next attempt and a possible disabling of the integration
 * commit together. A worker that dies mid-request commits nothing: the job's lease expires and another
 * worker sends the same attempt again (at-least-once; receivers drop duplicates by the delivery id).
 *
 * Retry timing is ours, not the queue's: attempt n+1 is due CONTROLGRAPH_WEBHOOK_RETRY_SCHEDULE[n]
 * seconds after attempt n failed (0, 30, 300, 1800, 7200 by default), or later when the receiver asked
 * for it (429 or 503 with Retry-After, up to a day). After as many failed attempts as the schedule has
 * entries the delivery has failed for good. A 410 fails it at once and disables the integration.
 *
 * Auto-disable: when a delivery fails for good, the integration is disabled if more than half of its
 * last AUTO_DISABLE_WINDOW finished deliveries (this one included) since it was created or last
 * re-enabled have failed.
 */
export const AUTO_DISABLE_WINDOW = 20;
/**
 * The lease of an attempt's job. The worker renews it every third of it while the request runs (up
 * to config.timeout_seconds, at most 120 s); a worker killed mid-request stops renewing, and another
 * worker sends the same attempt again once the lease has run out.
 */
export const DELIVERY_LEASE_MS = 15_000;
export const AUTO_DISABLE_RATE = 0.5;
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

const SYSTEM: AuditActor = { type: 'system', id: null, name: 'integrations-delivery' };

export interface AttemptResult {
  /** The job no longer carries this delivery's next attempt (deleted, redelivered, done). */
  skipped?: 'stale';
  /** The integration was disabled before the attempt: nothing was sent. */
  cancelled?: string;
  ok?: boolean;
  attemptedAt?: string;
  statusCode?: number | null;
  latencyMs?: number | null;
  responseBody?: string | null;
  error?: string | null;
  retryAfterMs?: number | null;
  /** A receiver signal that disables the integration now (410). */
  disable?: string | null;
}

type Deps = Pick<AppDeps, 'database' | 'clock' | 'log' | 'tokenKey'>;

export function deliveryJob(deps: Deps, settings: DeliverySettings, client: HttpClient): JobDefinition<{ delivery_id: string }> {
  return {
    kind: DELIVER_JOB,
    maxAttempts: DELIVER_JOB_ATTEMPTS,
    leaseMs: DELIVERY_LEASE_MS,
    run: (payload, ctx) => attempt(deps, settings, client, payload.delivery_id, ctx),
    onSucceeded: async (job, result, trx) => {
      await record(deps, settings, trx, job, result as AttemptResult);
    },
    onFailed: async (job, error, trx) => {
      // The attempt's job gave up (handler errors, or workers that died holding it): one failed attempt.
      await record(deps, settings, trx, job, { ok: false, attemptedAt: deps.clock.now().toISOString(), error: `attempt did not complete: ${error}` });
    },
  };
}

async function attempt(deps: Deps, settings: DeliverySettings, client: HttpClient, deliveryId: string, ctx: JobContext): Promise<AttemptResult> {
  const delivery = await ctx.db.selectFrom('integration_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirst();
  if (!delivery || delivery.status !== 'pending' || delivery.job_id !== ctx.job.id) return { skipped: 'stale' };
  const integration = await ctx.db.selectFrom('integrations').selectAll().where('id', '=', delivery.integration_id).executeTakeFirst();
  if (!integration) return { skipped: 'stale' };
  if (integration.status !== 'active') return { cancelled: 'the integration was disabled before the attempt: nothing was sent; redeliver after re-enabling it' };
  const attemptedAt = deps.clock.now();
  const failed = (error: string): AttemptResult => ({ ok: false, attemptedAt: attemptedAt.toISOString(), statusCode: null, latencyMs: null, responseBody: null, error });

  let config: IntegrationConfig;
  try {
    const box = await secretBoxFor(deps);
    config = joinSecrets(integration.config, box.open(integration.secrets, integration.id));
  } catch (error) {
    if (error instanceof SecretError) return failed(error.message);
    throw error;
  }
  let prepared;
  try {
    prepared = prepare(integration.type, {
      config,
      envelopeText: delivery.envelope,
      envelope: JSON.parse(delivery.envelope) as Envelope,
      deliveryId: delivery.id,
      now: attemptedAt,
    });
  } catch (error) {
    if (error instanceof FormatError) return failed(error.message);
    throw error;
  }
  const timeoutMs = Number(config.timeout_seconds ?? 30) * 1000;

  if (prepared.kind === 'email') {
    const mail = await sendMail(settings, config.smtp as SmtpConfig | undefined, prepared, timeoutMs);
    return {
      ok: mail.ok,
      attemptedAt: attemptedAt.toISOString(),
      statusCode: mail.code,
      latencyMs: mail.latencyMs,
      responseBody: mail.response.slice(0, settings.responseBodyLimit) || null,
      error: mail.error,
    };
  }

  const response = await client.send({ url: prepared.url, method: prepared.method, headers: prepared.headers, body: prepared.body, timeoutMs, signal: ctx.signal });
  const result: AttemptResult = {
    ok: false,
    attemptedAt: attemptedAt.toISOString(),
    statusCode: response.status,
    latencyMs: response.latencyMs,
    responseBody: response.status === null ? null : response.body,
    error: response.error,
  };
  const status = response.status;
  if (status === null) return result;
  if (status >= 200 && status < 300) return { ...result, ok: true };
  if (status >= 300 && status < 400) {
    const location = response.headers.location;
    result.error = `redirect not followed (${status}${location ? ` to ${String(location).slice(0, 300)}` : ''})`;
  } else if (status === 410) {
    result.error = 'the receiver answered 410 Gone';
    result.disable = 'the receiver answered 410 Gone';
  } else {
    result.error = `HTTP ${status}`;
    if (status === 429 || status === 503) result.retryAfterMs = retryAfterMs(response.headers['retry-after'], attemptedAt);
  }
  return result;
}

/** Retry-After as seconds or an HTTP date, in ms from now; null when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now: Date): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  const trimmed = text.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return null;
    ms = at - now.getTime();
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

async function record(deps: Deps, settings: DeliverySettings, trx: Kysely<Database>, job: JobRow, result: AttemptResult): Promise<void> {
  if (result.skipped) return;
  const deliveryId = (job.payload as { delivery_id?: string }).delivery_id;
  if (!deliveryId) return;
  const delivery = await trx.selectFrom('integration_deliveries').selectAll().where('id', '=', deliveryId).forUpdate().executeTakeFirst();
  if (!delivery || delivery.status !== 'pending' || delivery.job_id !== job.id) return;
  const now = deps.clock.now();

  if (result.cancelled) {
    await trx
      .updateTable('integration_deliveries')
      .set({ status: 'failed', last_error: result.cancelled, next_attempt_at: null, job_id: null, updated_at: now, completed_at: now })
      .where('id', '=', delivery.id)
      .execute();
    return;
  }

  const number = delivery.attempts + 1;
  const roundAttempt = delivery.round_attempts + 1;
  const schedule = settings.retryScheduleSeconds;
  const ok = result.ok === true;
  const last = ok || Boolean(result.disable) || roundAttempt >= schedule.length;
  let nextAt: Date | null = null;
  let nextJob: string | null = null;
  if (!last) {
    const delay = Math.max(schedule[roundAttempt]! * 1000, result.retryAfterMs ?? 0);
    nextAt = new Date(now.getTime() + delay);
    nextJob = randomUUID();
  }
  await trx
    .insertInto('integration_delivery_attempts')
    .values({
      delivery_id: delivery.id,
      number,
      attempted_at: result.attemptedAt ?? now,
      outcome: ok ? 'succeeded' : 'failed',
      status_code: result.statusCode ?? null,
      latency_ms: result.latencyMs ?? null,
      response_body: result.responseBody ?? null,
      error: result.error ?? null,
      next_attempt_at: nextAt,
    })
    .execute();
  await trx
    .updateTable('integration_deliveries')
    .set({
      status: ok ? 'succeeded' : last ? 'failed' : 'pending',
      attempts: number,
      round_attempts: roundAttempt,
      next_attempt_at: nextAt,
      last_status_code: result.statusCode ?? null,
      last_error: ok ? null : (result.error ?? null),
      job_id: nextJob,
      updated_at: now,
      completed_at: last ? now : null,
    })
    .where('id', '=', delivery.id)
    .execute();
  if (nextJob) {
    await trx
      .insertInto('jobs')
      .values({
        id: nextJob,
        kind: DELIVER_JOB,
        payload: json({ delivery_id: delivery.id }),
        status: 'queued',
        attempts: 0,
        max_attempts: DELIVER_JOB_ATTEMPTS,
        run_at: nextAt!,
        created_at: now,
      })
      .execute();
    await sql`SELECT pg_notify(${JOBS_CHANNEL}, ${DELIVER_JOB})`.execute(trx);
  }

  if (result.disable) {
    await disableIntegration(deps, trx, delivery, `auto-disabled: ${result.disable}`, { delivery_id: delivery.id, status_code: result.statusCode ?? null });
  } else if (last && !ok) {
    await maybeAutoDisable(deps, trx, delivery);
  }
}

/** After a permanent failure: disable when more than half of the recent finished deliveries failed. */
async function maybeAutoDisable(deps: Deps, trx: Kysely<Database>, delivery: DeliveryRow): Promise<void> {
  const integration = await trx.selectFrom('integrations').select(['enabled_at', 'status']).where('id', '=', delivery.integration_id).forUpdate().executeTakeFirst();
  if (!integration || integration.status !== 'active') return;
  const recent = await trx
    .selectFrom('integration_deliveries')
    .select('status')
    .where('integration_id', '=', delivery.integration_id)
    .where('completed_at', 'is not', null)
    .where('completed_at', '>=', integration.enabled_at)
    .where('status', 'in', ['succeeded', 'failed'])
    .orderBy('completed_at', 'desc')
    .limit(AUTO_DISABLE_WINDOW)
    .execute();
  const failed = recent.filter((r) => r.status === 'failed').length;
  if (recent.length === 0 || failed / recent.length <= AUTO_DISABLE_RATE) return;
  const percent = Math.round((failed / recent.length) * 100);
  await disableIntegration(deps, trx, delivery, `auto-disabled: ${failed} of the last ${recent.length} deliveries failed (${percent}%, above 50%)`, {
    delivery_id: delivery.id,
    failed,
    window: recent.length,
  });
}

async function disableIntegration(deps: Deps, trx: Kysely<Database>, delivery: DeliveryRow, reason: string, details: Record<string, unknown>): Promise<void> {
  const now = deps.clock.now();
  const disabled = await trx
    .updateTable('integrations')
    .set({ status: 'disabled', disabled_at: now, disabled_reason: reason, updated_at: now })
    .where('id', '=', delivery.integration_id)
    .where('status', '=', 'active')
    .returning(['id', 'tenant_id', 'name', 'type'])
    .executeTakeFirst();
  if (!disabled) return;
  deps.log.warn({ integration_id: disabled.id, tenant_id: disabled.tenant_id, reason }, 'integration disabled');
  await writeAudit(trx, deps.clock, SYSTEM, {
    tenantId: disabled.tenant_id,
    action: 'integration.disabled',
    targetType: 'integration',
    targetId: disabled.id,
    details: { name: disabled.name, type: disabled.type, reason, ...details },
  });
}

export type { IntegrationRow };
