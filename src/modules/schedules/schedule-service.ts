import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inScope, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInScope } from '../../platform/audit/audit-log.js';
import { badRequest, conflict, forbidden, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { FRAMEWORKS, isFrameworkId, unknownFramework } from '../compliance/index.js';
import { findDiscoveryJob, whyNotRepeatable } from '../discovery/index.js';
import { checkTiming, nextRunAfter, type Timing } from './timing.js';
import type { ScheduleKind, ScheduleTarget } from './tables.js';
import './tables.js';

export type ScheduleRow = Selectable<Database['schedules']>;
export type RunRow = Selectable<Database['schedule_runs']>;
type Deps = Pick<AppDeps, 'database' | 'clock'>;

/** Schedules per workspace: each one queues real work, so a runaway script is stopped early. */
export const MAX_SCHEDULES_PER_WORKSPACE = 200;

/** Who may change a schedule: whoever may create discovery jobs, or run audits. */
const WRITE_PERMISSION: Record<ScheduleKind, string> = { discovery: 'jobs:write', audit: 'audit:run' };

function requireWrite(context: RequestContext, kind: ScheduleKind): void {
  const permission = WRITE_PERMISSION[kind];
  if (!context.actor.permissions.has(permission)) throw forbidden(`missing permission ${permission} (needed for ${kind} schedules)`);
}

export function presentSchedule(row: ScheduleRow) {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    target: row.target,
    cron: row.cron,
    interval_seconds: row.interval_seconds,
    time_zone: row.time_zone,
    enabled: row.enabled,
    next_run_at: row.next_run_at,
    last_run_at: row.last_run_at,
    last_status: row.last_status,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function runJobUrl(tenantId: string, kind: ScheduleKind, jobId: string): string {
  return kind === 'discovery' ? `/api/v1/tenants/${tenantId}/jobs/${jobId}` : `/api/v1/tenants/${tenantId}/findings/runs/${jobId}`;
}

function presentRun(row: RunRow, kind: ScheduleKind) {
  return {
    id: row.id,
    schedule_id: row.schedule_id,
    status: row.status,
    due_at: row.due_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    job_id: row.job_id,
    job_url: row.job_id ? runJobUrl(row.tenant_id, kind, row.job_id) : null,
    error: row.error,
  };
}

/** The target as stored, checked against the workspace: 400 naming target.job_id or target.frameworks. */
async function checkTarget(db: Kysely<Database>, scope: Scope, kind: ScheduleKind, target: { job_id?: string; frameworks?: string[] }): Promise<ScheduleTarget> {
  if (kind === 'discovery') {
    if (target.frameworks !== undefined) throw badRequest('target.frameworks: only audit schedules name frameworks', { field: 'target.frameworks' });
    if (target.job_id === undefined) throw badRequest('target.job_id: a discovery schedule names the discovery job each run repeats', { field: 'target.job_id' });
    const job = await findDiscoveryJob(db, scope, target.job_id);
    if (!job) throw badRequest(`target.job_id: no discovery job ${target.job_id} in this workspace`, { field: 'target.job_id' });
    const why = whyNotRepeatable(job);
    if (why) throw badRequest(`target.job_id: job ${job.id} cannot be repeated: ${why}`, { field: 'target.job_id' });
    return { job_id: job.id };
  }
  if (target.job_id !== undefined) throw badRequest('target.job_id: only discovery schedules name a job', { field: 'target.job_id' });
  const frameworks = [...new Set(target.frameworks ?? [])];
  for (const f of frameworks) if (!isFrameworkId(f)) throw unknownFramework(f, FRAMEWORKS, 'target.frameworks');
  return { frameworks };
}

export function timingOf(row: Pick<ScheduleRow, 'cron' | 'interval_seconds' | 'time_zone'>): Timing {
  return { cron: row.cron, interval_seconds: row.interval_seconds, time_zone: row.time_zone };
}

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createScheduleService(deps: Deps) {
  const db = deps.database.db;

  async function row(scope: Scope, id: string, trx: Kysely<Database> = db, lock = false): Promise<ScheduleRow> {
    const found = await trx
      .selectFrom('schedules')
      .selectAll()
      .where('id', '=', id)
      .where(inScope(scope))
      .$if(lock, (q) => q.forUpdate())
      .executeTakeFirst();
    if (!found) throw notFound('schedule not found');
    return found;
  }

  return {
    async create(
      context: RequestContext,
      body: {
        name: string;
        kind: ScheduleKind;
        target: { job_id?: string; frameworks?: string[] };
        cron?: string | null;
        interval_seconds?: number | null;
        time_zone?: string;
        enabled?: boolean;
      },
    ) {
      requireWrite(context, body.kind);
      const { scope } = context;
      const now = deps.clock.now();
      const timing = checkTiming(body, now);
      const target = await checkTarget(db, scope, body.kind, body.target);
      const enabled = body.enabled ?? true;
      const created = await db.transaction().execute(async (trx) => {
        const count = await trx
          .selectFrom('schedules')
          .where(inScope(scope))
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        if (Number(count.n) >= MAX_SCHEDULES_PER_WORKSPACE) throw conflict(`a workspace has at most ${MAX_SCHEDULES_PER_WORKSPACE} schedules: delete one first`);
        const schedule = await trx
          .insertInto('schedules')
          .values({
            id: randomUUID(),
            tenant_id: scope.tenantId,
            workspace_id: scope.workspaceId,
            name: body.name.trim() || body.name,
            kind: body.kind,
            target: json(target),
            ...timing,
            enabled,
            next_run_at: enabled ? nextRunAfter(timing, now) : null,
            created_by: `${context.actor.type}:${context.actor.id}`,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await auditInScope(trx, deps.clock, context, {
          action: 'schedule.created',
          targetType: 'schedule',
          targetId: schedule.id,
          details: { name: schedule.name, kind: schedule.kind, target, ...timing, enabled },
        });
        return schedule;
      });
      return presentSchedule(created);
    },

    async list(scope: Scope, query: { kind?: ScheduleKind }, page: PageRequest) {
      const q = db
        .selectFrom('schedules')
        .where(inScope(scope))
        .$if(query.kind !== undefined, (b) => b.where('kind', '=', query.kind!));
      const [rows, count] = await Promise.all([
        q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.perPage).offset(offsetOf(page)).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(rows.map(presentSchedule), Number(count.n), page);
    },

    async get(scope: Scope, id: string) {
      return presentSchedule(await row(scope, id));
    },

    /**
     * Changes name, target, timing or enabled. New timing, or enabling, computes the next run from
     * now; disabling clears it. A cron expression replaces an interval and the other way round.
     */
    async update(
      context: RequestContext,
      id: string,
      body: { name?: string; target?: { job_id?: string; frameworks?: string[] }; cron?: string | null; interval_seconds?: number | null; time_zone?: string; enabled?: boolean },
    ) {
      const { scope } = context;
      const updated = await db.transaction().execute(async (trx) => {
        const current = await row(scope, id, trx, true);
        requireWrite(context, current.kind);
        const now = deps.clock.now();
        const timingChanged = body.cron !== undefined || body.interval_seconds !== undefined || body.time_zone !== undefined;
        let timing = timingOf(current);
        if (timingChanged) {
          const givesCron = body.cron !== undefined && body.cron !== null;
          const givesInterval = body.interval_seconds !== undefined && body.interval_seconds !== null;
          timing = checkTiming(
            {
              cron: givesCron ? body.cron : givesInterval || body.cron === null ? null : current.cron,
              interval_seconds: givesInterval ? body.interval_seconds : givesCron || body.interval_seconds === null ? null : current.interval_seconds,
              time_zone: body.time_zone ?? current.time_zone,
            },
            now,
          );
        }
        const target = body.target ? await checkTarget(trx, scope, current.kind, body.target) : current.target;
        const enabled = body.enabled ?? current.enabled;
        const nextRunAt = !enabled ? null : timingChanged || !current.enabled ? nextRunAfter(timing, now) : current.next_run_at;
        const saved = await trx
          .updateTable('schedules')
          .set({ name: body.name ?? current.name, target: json(target), ...timing, enabled, next_run_at: nextRunAt, updated_at: now })
          .where('id', '=', current.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        const changes = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
        await auditInScope(trx, deps.clock, context, {
          action: 'schedule.updated',
          targetType: 'schedule',
          targetId: current.id,
          details: { name: saved.name, kind: saved.kind, changes },
        });
        return saved;
      });
      return presentSchedule(updated);
    },

    /** Deletes the schedule and its history; a run it already queued goes on. */
    async delete(context: RequestContext, id: string) {
      await db.transaction().execute(async (trx) => {
        const current = await row(context.scope, id, trx, true);
        requireWrite(context, current.kind);
        await trx.deleteFrom('schedules').where('id', '=', current.id).execute();
        await auditInScope(trx, deps.clock, context, {
          action: 'schedule.deleted',
          targetType: 'schedule',
          targetId: current.id,
          details: { name: current.name, kind: current.kind },
        });
      });
    },

    async runs(scope: Scope, id: string, page: PageRequest) {
      const schedule = await row(scope, id);
      const q = db.selectFrom('schedule_runs').where('schedule_id', '=', schedule.id).where(inScope(scope));
      const [rows, count] = await Promise.all([
        q.selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc').limit(page.perPage).offset(offsetOf(page)).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(
        rows.map((r) => presentRun(r, schedule.kind)),
        Number(count.n),
        page,
      );
    },
  };
}
