import { inTenant } from '../../platform/db/scope.js';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInTenant } from '../../platform/audit/audit-log.js';
import { conflict, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { JOBS_CHANNEL } from '../../platform/jobs/queue.js';
import { TEST_EVENT } from './catalog.js';
import { DELIVER_JOB, DELIVER_JOB_ATTEMPTS } from './dispatcher.js';
import type { AttemptRow, DeliveryRow } from './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

export function presentAttempt(a: AttemptRow) {
  return {
    number: a.number,
    attempted_at: a.attempted_at,
    outcome: a.outcome,
    status_code: a.status_code,
    latency_ms: a.latency_ms,
    response_body: a.response_body,
    error: a.error,
    next_attempt_at: a.next_attempt_at,
  };
}

function presentDelivery(d: DeliveryRow, attempts: AttemptRow[], withEnvelope = false) {
  return {
    id: d.id,
    integration_id: d.integration_id,
    event_id: d.event_id,
    event_type: d.event_type,
    workspace_id: d.workspace_id,
    status: d.status,
    attempt_count: d.attempts,
    next_attempt_at: d.next_attempt_at,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    created_at: d.created_at,
    updated_at: d.updated_at,
    completed_at: d.completed_at,
    attempts: attempts.map(presentAttempt),
    ...(withEnvelope ? { envelope: JSON.parse(d.envelope) as Record<string, unknown> } : {}),
  };
}

async function enqueueAttempt(trx: Kysely<Database>, deliveryId: string, jobId: string, runAt: Date, now: Date): Promise<void> {
  await trx
    .insertInto('jobs')
    .values({
      id: jobId,
      kind: DELIVER_JOB,
      payload: json({ delivery_id: deliveryId }),
      status: 'queued',
      attempts: 0,
      max_attempts: DELIVER_JOB_ATTEMPTS,
      run_at: runAt,
      created_at: now,
    })
    .execute();
  await sql`SELECT pg_notify(${JOBS_CHANNEL}, ${DELIVER_JOB})`.execute(trx);
}

/** Deliveries of an integration with their attempts; redelivery; a test delivery. */
export function createDeliveryService(deps: Deps) {
  const db = deps.database.db;

  async function integrationOf(executor: Kysely<Database>, context: RequestContext, integrationId: string, forUpdate = false) {
    let query = executor.selectFrom('integrations').select(['id', 'tenant_id', 'status', 'name', 'type']).where(inTenant(context.scope.tenantId)).where('id', '=', integrationId);
    if (forUpdate) query = query.forShare();
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('integration not found');
    return row;
  }

  async function attemptsOf(ids: string[]): Promise<Map<string, AttemptRow[]>> {
    const map = new Map<string, AttemptRow[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return map;
    const rows = await db.selectFrom('integration_delivery_attempts').selectAll().where('delivery_id', 'in', ids).orderBy('delivery_id').orderBy('number').execute();
    for (const row of rows) map.get(row.delivery_id)!.push(row);
    return map;
  }

  async function one(context: RequestContext, integrationId: string, deliveryId: string) {
    await integrationOf(db, context, integrationId);
    const delivery = await db.selectFrom('integration_deliveries').selectAll().where('integration_id', '=', integrationId).where('id', '=', deliveryId).executeTakeFirst();
    if (!delivery) throw notFound('delivery not found');
    return presentDelivery(delivery, (await attemptsOf([delivery.id])).get(delivery.id)!, true);
  }

  return {
    one,

    /** Newest first. */
    async list(context: RequestContext, integrationId: string, filter: { status?: 'pending' | 'succeeded' | 'failed'; event_type?: string }, page: PageRequest) {
      await integrationOf(db, context, integrationId);
      let query = db.selectFrom('integration_deliveries').where('integration_id', '=', integrationId);
      if (filter.status) query = query.where('status', '=', filter.status);
      if (filter.event_type) query = query.where('event_type', '=', filter.event_type);
      const { n } = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await query.selectAll().orderBy('created_at', 'desc').orderBy('event_seq', 'desc').orderBy('id', 'desc').limit(page.perPage).offset(offsetOf(page)).execute();
      const attempts = await attemptsOf(rows.map((r) => r.id));
      return toPage(
        rows.map((r) => presentDelivery(r, attempts.get(r.id)!)),
        Number(n),
        page,
      );
    },

    /**
     * Sends a finished delivery again: a new round of attempts on the same retry schedule, with the
     * same delivery id (receivers that already processed it drop it). 409 while it is still pending or
     * while the integration is disabled.
     */
    async retry(context: RequestContext, integrationId: string, deliveryId: string) {
      const now = deps.clock.now();
      await db.transaction().execute(async (trx) => {
        const integration = await integrationOf(trx, context, integrationId, true);
        const delivery = await trx
          .selectFrom('integration_deliveries')
          .selectAll()
          .where('integration_id', '=', integrationId)
          .where('id', '=', deliveryId)
          .forUpdate()
          .executeTakeFirst();
        if (!delivery) throw notFound('delivery not found');
        if (integration.status !== 'active') throw conflict('the integration is disabled: re-enable it with PUT first');
        if (delivery.status === 'pending') throw conflict('the delivery is still pending: its next attempt is already scheduled');
        const jobId = randomUUID();
        await trx
          .updateTable('integration_deliveries')
          .set({ status: 'pending', round_attempts: 0, next_attempt_at: now, job_id: jobId, completed_at: null, updated_at: now })
          .where('id', '=', delivery.id)
          .execute();
        await enqueueAttempt(trx, delivery.id, jobId, now, now);
        await auditInTenant(trx, deps.clock, context, {
          action: 'integration.delivery_retried',
          targetType: 'integration',
          targetId: integrationId,
          details: { delivery_id: delivery.id, event_id: delivery.event_id, event_type: delivery.event_type, previous_status: delivery.status },
        });
      });
      return one(context, integrationId, deliveryId);
    },

    /** A synthetic integration.test event to this integration only (filters and subscriptions aside). */
    async test(context: RequestContext, integrationId: string) {
      const now = deps.clock.now();
      const id = randomUUID();
      await db.transaction().execute(async (trx) => {
        const integration = await integrationOf(trx, context, integrationId, true);
        if (integration.status !== 'active') throw conflict('the integration is disabled: re-enable it with PUT first');
        const eventId = randomUUID();
        const envelope = JSON.stringify({
          id: eventId,
          type: TEST_EVENT,
          tenant_id: context.scope.tenantId,
          workspace_id: context.scope.workspaceId,
          timestamp: now.toISOString(),
          data: { message: 'This is a test delivery from ControlGraph.', integration_id: integrationId, requested_by: context.actor.name },
        });
        const jobId = randomUUID();
        await trx
          .insertInto('integration_deliveries')
          .values({
            id,
            integration_id: integrationId,
            tenant_id: context.scope.tenantId,
            workspace_id: context.scope.workspaceId,
            event_id: eventId,
            event_seq: '0',
            event_type: TEST_EVENT,
            envelope,
            status: 'pending',
            attempts: 0,
            round_attempts: 0,
            next_attempt_at: now,
            job_id: jobId,
            created_at: now,
            updated_at: now,
          })
          .execute();
        await enqueueAttempt(trx, id, jobId, now, now);
        await auditInTenant(trx, deps.clock, context, {
          action: 'integration.tested',
          targetType: 'integration',
          targetId: integrationId,
          details: { delivery_id: id },
        });
      });
      return one(context, integrationId, id);
    },
  };
}

/** Finished deliveries older than the retention are removed with their attempts. */
export async function sweepDeliveries(deps: Deps, retentionMs: number, limit = 5_000): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - retentionMs);
  const result = await sql`
    DELETE FROM integration_deliveries WHERE id IN (
      SELECT id FROM integration_deliveries WHERE completed_at IS NOT NULL AND completed_at < ${before} LIMIT ${limit}
    )`.execute(deps.database.db);
  return Number(result.numAffectedRows ?? 0);
}
