import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { emitEvent } from '../../platform/events/outbox.js';
import type { Clock } from '../../platform/clock.js';
import { enabledFrameworks, requestAudit, type FrameworkId } from '../compliance/index.js';
import { findDiscoveryJob, repeatDiscoveryJob, whyNotRepeatable } from '../discovery/index.js';
import { runJobUrl, timingOf, type RunRow, type ScheduleRow } from './schedule-service.js';
import { nextRunAfter } from './timing.js';
import type { RunStatus, ScheduleTarget } from './tables.js';

export const DISPATCH_JOB = 'schedules.dispatch';
/** How often the dispatcher looks for due schedules and finished runs: the latency of both. */
export const DISPATCH_INTERVAL_MS = 30_000;
/** Schedules fired and runs completed per transaction; the rest wait for the next dispatch. */
const BATCH = 100;
/**
 * How long a finished run stays in the history: a schedule every 5 minutes would otherwise add
 * 105,000 rows a year. The discovery jobs and audit runs themselves are kept by their own rules.
 */
export const RUN_RETENTION_DAYS = 90;
const PRUNE_BATCH = 1_000;

type Deps = Pick<AppDeps, 'database' | 'clock' | 'log'>;

export const RUN_FINISHED_EVENT = 'schedule.run_finished';

/** schedule.run_finished: which schedule, and how its run ended. */
async function emitRunFinished(trx: Kysely<Database>, clock: Clock, schedule: Pick<ScheduleRow, 'id' | 'name' | 'kind'>, run: RunRow): Promise<void> {
  await emitEvent(trx, clock, {
    tenantId: run.tenant_id,
    workspaceId: run.workspace_id,
    type: RUN_FINISHED_EVENT,
    data: {
      schedule: { id: schedule.id, name: schedule.name, kind: schedule.kind },
      run: {
        id: run.id,
        status: run.status,
        due_at: run.due_at,
        started_at: run.started_at,
        finished_at: run.finished_at,
        job_id: run.job_id,
        job_url: run.job_id ? runJobUrl(run.tenant_id, schedule.kind, run.job_id) : null,
        error: run.error,
      },
    },
  });
}

/**
 * Why a due run is not queued: what the schedule names is gone or switched off. Found before anything
 * is written, so the dispatcher's transaction goes on and records a failed run; any other error (the
 * database's) fails the dispatch, which the queue retries.
 */
class RunRefused extends Error {
  override name = 'RunRefused';
}

/** Queues what the schedule runs, in the caller's transaction; returns the job id, or throws RunRefused. */
async function queueRun(trx: Kysely<Database>, deps: Deps, schedule: ScheduleRow): Promise<string> {
  const scope = { tenantId: schedule.tenant_id, workspaceId: schedule.workspace_id };
  const target = schedule.target as ScheduleTarget;
  if ('job_id' in target) {
    const template = await findDiscoveryJob(trx, scope, target.job_id);
    if (!template) throw new RunRefused(`discovery job ${target.job_id} no longer exists`);
    const why = whyNotRepeatable(template);
    if (why) throw new RunRefused(`discovery job ${target.job_id} cannot be repeated: ${why}`);
    return repeatDiscoveryJob(trx, deps.clock, scope, target.job_id, `schedule:${schedule.id}`);
  }
  const enabled = await enabledFrameworks(trx, scope.tenantId);
  const frameworks = target.frameworks.length ? enabled.filter((f) => target.frameworks.includes(f)) : enabled;
  if (frameworks.length === 0) throw new RunRefused(`every framework the schedule audits (${target.frameworks.join(', ') || 'all'}) is disabled for this tenant`);
  const run = await requestAudit(trx, deps, scope, frameworks as FrameworkId[], 'schedule', `schedule:${schedule.id}`);
  return run.id;
}

/**
 * Fires every due, enabled schedule once. Rows are claimed FOR UPDATE SKIP LOCKED, so two dispatchers
 * at the same moment (the queue already runs one at a time; a process that lost its lease may still
 * be finishing) never fire a schedule twice: the second skips the locked row, then finds next_run_at
 * moved. A schedule whose previous run is still running records a skipped run instead of piling up.
 */
export async function fireDueSchedules(deps: Deps): Promise<string[]> {
  const { db } = deps.database;
  return db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const due = await trx
      .selectFrom('schedules')
      .selectAll()
      .where('enabled', '=', true)
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(BATCH)
      .forUpdate()
      .skipLocked()
      .execute();
    for (const schedule of due) {
      const next = nextRunAfter(timingOf(schedule), now, schedule.next_run_at);
      const busy = await trx.selectFrom('schedule_runs').select('id').where('schedule_id', '=', schedule.id).where('status', '=', 'running').executeTakeFirst();
      let status: RunStatus = 'running';
      let jobId: string | null = null;
      let error: string | null = null;
      if (busy) {
        [status, error] = ['skipped', `the previous run (${busy.id}) was still running`];
      } else {
        try {
          jobId = await queueRun(trx, deps, schedule);
        } catch (e) {
          // What the schedule names is gone or switched off: a failed run, not a dispatcher retry.
          if (!(e instanceof RunRefused)) throw e;
          [status, error] = ['failed', e.message];
        }
      }
      const run = await trx
        .insertInto('schedule_runs')
        .values({
          id: randomUUID(),
          schedule_id: schedule.id,
          tenant_id: schedule.tenant_id,
          workspace_id: schedule.workspace_id,
          due_at: schedule.next_run_at!,
          started_at: now,
          finished_at: status === 'running' ? null : now,
          status,
          job_id: jobId,
          error,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await trx
        .updateTable('schedules')
        .set({ next_run_at: next, ...(status === 'skipped' ? {} : { last_run_at: now, last_status: status }) })
        .where('id', '=', schedule.id)
        .execute();
      if (status !== 'running') await emitRunFinished(trx, deps.clock, schedule, run);
    }
    return due.map((s) => s.id);
  });
}

/** The run's outcome from its queued job: a job that skipped its work (cancelled meanwhile) is cancelled. */
function outcomeOf(job: { status: string; result: unknown; last_error: string | null } | null): { status: RunStatus; error: string | null } | null {
  if (!job) return { status: 'failed', error: 'the queued job no longer exists' };
  if (job.status === 'succeeded') {
    const skipped = (job.result as { skipped?: unknown } | null)?.skipped;
    return skipped ? { status: 'cancelled', error: String(skipped) } : { status: 'succeeded', error: null };
  }
  if (job.status === 'failed') return { status: 'failed', error: job.last_error ?? 'failed' };
  if (job.status === 'cancelled') return { status: 'cancelled', error: null };
  return null;
}

/** Completes the runs whose job has finished: status, finished_at, the schedule's last_status, the event. */
export async function completeFinishedRuns(deps: Deps): Promise<string[]> {
  const { db } = deps.database;
  return db.transaction().execute(async (trx) => {
    const running = await trx
      .selectFrom('schedule_runs as r')
      .innerJoin('schedules as s', 's.id', 'r.schedule_id')
      .leftJoin('jobs as j', 'j.id', 'r.job_id')
      .select(['r.id', 'r.schedule_id', 's.name', 's.kind', 'j.id as found', 'j.status as job_status', 'j.result', 'j.last_error'])
      .where('r.status', '=', 'running')
      .where((eb) => eb.or([eb('j.id', 'is', null), eb('j.status', 'in', ['succeeded', 'failed', 'cancelled'])]))
      .orderBy('r.started_at')
      .limit(BATCH)
      .forUpdate('r')
      .skipLocked()
      .execute();
    const now = deps.clock.now();
    const done: string[] = [];
    for (const r of running) {
      const outcome = outcomeOf(r.found ? { status: r.job_status!, result: r.result, last_error: r.last_error } : null);
      if (!outcome) continue;
      const run = await trx
        .updateTable('schedule_runs')
        .set({ status: outcome.status, error: outcome.error, finished_at: now })
        .where('id', '=', r.id)
        .where('status', '=', 'running')
        .returningAll()
        .executeTakeFirst();
      if (!run) continue;
      // The schedule's last_status follows its latest run only.
      await trx
        .updateTable('schedules')
        .set({ last_status: outcome.status })
        .where('id', '=', r.schedule_id)
        .where(sql<boolean>`last_run_at <= ${run.started_at}`)
        .execute();
      await emitRunFinished(trx, deps.clock, { id: r.schedule_id, name: r.name, kind: r.kind }, run);
      done.push(run.id);
    }
    return done;
  });
}

/** Drops finished runs older than the retention, a bounded batch per dispatch. */
export async function pruneRuns(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - RUN_RETENTION_DAYS * 86_400_000);
  const { db } = deps.database;
  const gone = await db
    .deleteFrom('schedule_runs')
    .where('id', 'in', db.selectFrom('schedule_runs').select('id').where('finished_at', '<', cutoff).limit(PRUNE_BATCH))
    .executeTakeFirst();
  return Number(gone.numDeletedRows);
}

/** The recurring queue job: finish what ended, then fire what is due, then forget old history. */
export async function dispatchSchedules(deps: Deps): Promise<{ completed: number; fired: number }> {
  const completed = await completeFinishedRuns(deps);
  const fired = await fireDueSchedules(deps);
  await pruneRuns(deps);
  if (fired.length || completed.length) deps.log.debug({ fired: fired.length, completed: completed.length }, 'schedules dispatched');
  return { completed: completed.length, fired: fired.length };
}
