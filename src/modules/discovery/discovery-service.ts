import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInScope } from '../../platform/audit/audit-log.js';
import { emitEvent } from '../../platform/events/outbox.js';
import { cancelJob, enqueueJob } from '../../platform/jobs/queue.js';
import { badRequest, conflict, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { tryParseDuration } from '../../platform/duration.js';
import type { Clock } from '../../platform/clock.js';
import { DISCOVERY_STATUSES, type DiscoveryPlugin } from './schemas.js';
import type { PluginConfig } from './run-plugins.js';
import { checkJobCredentials } from './job-credentials.js';
import './tables.js';

export const DISCOVERY_JOB = 'exports.discovery';
export const DISCOVERY_MAX_ATTEMPTS = 3;

export type DiscoveryRow = Selectable<Database['discovery_jobs']>;
type Deps = Pick<AppDeps, 'database' | 'clock' | 'config'>;

export function jobUrl(tenantId: string, id: string): string {
  return `/api/v1/tenants/${tenantId}/jobs/${id}`;
}

/** The plugin configuration as shown: an uploaded state is summarised, never echoed back. */
function publicConfig(config: PluginConfig & { 'terraform-state'?: { state_bytes?: number } }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const tf = config['terraform-state'];
  if (tf) {
    const { state, files, ...rest } = tf;
    out['terraform-state'] = {
      ...rest,
      source: rest.state_uri ? 's3' : 'upload',
      ...(state !== undefined || tf.state_bytes !== undefined ? { state_bytes: tf.state_bytes ?? 0, state_kept: state !== undefined } : {}),
      files: files ? Object.keys(files).sort() : [],
    };
  }
  if (config.aws) out.aws = config.aws;
  return out;
}

export function presentJob(row: DiscoveryRow) {
  return {
    id: row.id,
    name: row.name,
    plugins: row.plugins,
    status: row.status,
    status_url: jobUrl(row.tenant_id, row.id),
    config: publicConfig(row.config as PluginConfig),
    stats: (row.stats as { nodes_discovered: number; nodes_updated: number; findings_created: number; findings_resolved: number; duration_seconds: number } | null) ?? null,
    details: row.details ?? null,
    warnings: (row.warnings as string[]) ?? [],
    error: row.error,
    attempts: row.attempts,
    created_by: row.created_by,
    created_at: row.created_at,
    queued_at: row.queued_at,
    started_at: row.started_at,
    completed_at: row.completed_at,
  };
}

/**
 * The event payload of a discovery job (data.job). job.completed carries the spec's stats; failed
 * jobs their error.
 */
export function jobEventData(row: DiscoveryRow): Record<string, unknown> {
  return {
    job: {
      id: row.id,
      name: row.name,
      plugins: row.plugins,
      status: row.status,
      ...(row.status === 'completed' ? { stats: row.stats } : {}),
      ...(row.status === 'failed' ? { error: row.error } : {}),
      created_at: row.created_at,
      started_at: row.started_at,
      completed_at: row.completed_at,
    },
  };
}

export async function emitJobEvent(trx: Kysely<Database>, clock: Clock, type: string, row: DiscoveryRow): Promise<void> {
  await emitEvent(trx, clock, { tenantId: row.tenant_id, workspaceId: row.workspace_id, type, data: jobEventData(row) });
}

/** Queues a pending job (in the caller's transaction) under the job's own id. */
async function queue(trx: Kysely<Database>, clock: Clock, row: DiscoveryRow): Promise<DiscoveryRow> {
  await enqueueJob(trx, clock, { id: row.id, kind: DISCOVERY_JOB, tenantId: row.tenant_id, workspaceId: row.workspace_id, maxAttempts: DISCOVERY_MAX_ATTEMPTS });
  return trx.updateTable('discovery_jobs').set({ status: 'queued', queued_at: clock.now() }).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
}

function checkConfig(plugins: DiscoveryPlugin[], config: PluginConfig): void {
  for (const key of Object.keys(config)) {
    if (!plugins.includes(key as DiscoveryPlugin)) throw badRequest(`config for "${key}", which is not among the job's plugins`);
  }
  if (plugins.includes('terraform-state')) {
    const tf = config['terraform-state'];
    const given = [tf?.state !== undefined, tf?.state_uri !== undefined].filter(Boolean).length;
    if (given !== 1) throw badRequest('the terraform-state plugin needs exactly one of config["terraform-state"].state (the state file) and .state_uri (s3://bucket/key)');
    if (typeof tf!.state === 'string') {
      try {
        tf!.state = JSON.parse(tf!.state);
      } catch (error) {
        throw badRequest(`config["terraform-state"].state is not JSON: ${(error as Error).message}`);
      }
    }
    if (tf!.state !== undefined) {
      const state = tf!.state as { version?: unknown; resources?: unknown };
      if (!state || typeof state !== 'object' || Array.isArray(state)) throw badRequest('config["terraform-state"].state must be a JSON object');
      if (state.version !== 4) throw badRequest(`unsupported Terraform state format version ${JSON.stringify(state.version ?? null)}: only version 4 is read`);
      if (!Array.isArray(state.resources)) throw badRequest('the Terraform state has no resources array');
    }
  }
}

export interface ListJobsQuery {
  status?: string;
  older_than?: string;
}

export function createDiscoveryService(deps: Deps) {
  const db = deps.database.db;

  /** In a transaction (start, cancel) the row is locked, so a worker finishing meanwhile is seen, not overwritten. */
  async function row(scope: Scope, id: string, trx?: Kysely<Database>): Promise<DiscoveryRow> {
    const found = await (trx ?? db)
      .selectFrom('discovery_jobs')
      .selectAll()
      .where('id', '=', id)
      .where(inTenant(scope.tenantId))
      .where(inWorkspace(scope))
      .$if(trx !== undefined, (q) => q.forUpdate())
      .executeTakeFirst();
    if (!found) throw notFound('job not found');
    return found;
  }

  return {
    async create(context: RequestContext, body: { name: string; plugins: DiscoveryPlugin[]; config?: PluginConfig; start?: boolean }) {
      const config: PluginConfig = structuredClone(body.config ?? {});
      checkConfig(body.plugins, config);
      const { scope } = context;
      // Before anything is stored or queued: whose credentials each cloud source is read with.
      const credentials = await checkJobCredentials(deps, scope, body.plugins, config);
      const tf = config['terraform-state'] as (PluginConfig['terraform-state'] & { state_bytes?: number }) | undefined;
      if (tf?.state !== undefined) tf.state_bytes = Buffer.byteLength(JSON.stringify(tf.state));
      const now = deps.clock.now();
      const created = await db.transaction().execute(async (trx) => {
        let job = await trx
          .insertInto('discovery_jobs')
          .values({
            id: randomUUID(),
            tenant_id: scope.tenantId,
            workspace_id: scope.workspaceId,
            name: body.name,
            plugins: body.plugins,
            config: json(config),
            status: 'pending',
            warnings: json([]),
            attempts: 0,
            created_by: `${context.actor.type}:${context.actor.id}`,
            created_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await emitJobEvent(trx, deps.clock, 'job.created', job);
        // Discovery writes to the graph and reads clouds: who asked, and with whose credentials, is audited.
        await auditInScope(trx, deps.clock, context, {
          action: 'discovery_job.created',
          targetType: 'discovery_job',
          targetId: job.id,
          details: { name: job.name, plugins: job.plugins, start: body.start === true, credentials },
        });
        if (body.start) job = await queue(trx, deps.clock, job);
        return job;
      });
      return presentJob(created);
    },

    async list(scope: Scope, query: ListJobsQuery, page: PageRequest) {
      let q = db.selectFrom('discovery_jobs').where(inTenant(scope.tenantId)).where(inWorkspace(scope));
      if (query.status !== undefined) {
        const statuses = query.status
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const unknown = statuses.filter((s) => !(DISCOVERY_STATUSES as readonly string[]).includes(s));
        if (statuses.length === 0 || unknown.length) throw badRequest(`status must be one or more of ${DISCOVERY_STATUSES.join(', ')} (got "${query.status}")`);
        q = q.where('status', 'in', statuses as DiscoveryRow['status'][]);
      }
      if (query.older_than !== undefined) {
        const ms = tryParseDuration(query.older_than);
        if (ms === null) throw badRequest(`older_than must be a duration like 30s, 5m, 1h or 7d (got "${query.older_than}")`);
        q = q.where('created_at', '<', new Date(deps.clock.now().getTime() - ms));
      }
      const [rows, count] = await Promise.all([
        q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.perPage).offset(offsetOf(page)).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(rows.map(presentJob), Number(count.n), page);
    },

    async get(scope: Scope, id: string) {
      return presentJob(await row(scope, id));
    },

    /** pending → queued. A job runs once: starting it again is 409 (create a new job to rediscover). */
    async start(context: RequestContext, id: string) {
      const started = await db.transaction().execute(async (trx) => {
        const job = await row(context.scope, id, trx);
        if (job.status !== 'pending') throw conflict(`job is ${job.status}; only a pending job can be started`, { status: job.status });
        const queued = await queue(trx, deps.clock, job);
        await auditInScope(trx, deps.clock, context, {
          action: 'discovery_job.started',
          targetType: 'discovery_job',
          targetId: job.id,
        });
        return queued;
      });
      return presentJob(started);
    },

    /**
     * pending, queued or running → cancelled (job.cancelled). A running job stops at its worker's next
     * heartbeat; what it already wrote to the graph stays.
     */
    async cancel(context: RequestContext, id: string) {
      const cancelled = await db.transaction().execute(async (trx) => {
        const job = await row(context.scope, id, trx);
        if (!['pending', 'queued', 'running'].includes(job.status)) throw conflict(`job is ${job.status}; it cannot be cancelled`, { status: job.status });
        if (job.status !== 'pending') await cancelJob(trx, deps.clock, job.id);
        const updated = await trx
          .updateTable('discovery_jobs')
          .set({
            status: 'cancelled',
            completed_at: deps.clock.now(),
            // An uploaded state is not kept past the job's end.
            config: sql`config #- '{terraform-state,state}'`,
          })
          .where('id', '=', job.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await emitJobEvent(trx, deps.clock, 'job.cancelled', updated);
        await auditInScope(trx, deps.clock, context, {
          action: 'discovery_job.cancelled',
          targetType: 'discovery_job',
          targetId: job.id,
          details: { previous_status: job.status },
        });
        return updated;
      });
      return presentJob(cancelled);
    },
  };
}
