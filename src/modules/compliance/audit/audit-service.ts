import { sql, type Kysely, type Selectable } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../../platform/db/scope.js';
import { enqueueJob } from '../../../platform/jobs/queue.js';
import { badRequest, notFound } from '../../../platform/http/errors.js';
import { enabledFrameworks } from '../settings-service.js';
import { isFrameworkId, unknownFramework } from '../frameworks.js';
import type { FrameworkId } from '../rules/rule-types.js';
import { emptyStats } from './engine.js';

export const AUDIT_JOB = 'compliance.audit';

type Run = Selectable<Database['audit_runs']>;

export function presentRun(run: Run) {
  return {
    job_id: run.id,
    status: run.status,
    frameworks: run.frameworks,
    // Before the worker picks it up, the run's start is when it was asked for.
    started_at: run.started_at ?? run.created_at,
    finished_at: run.finished_at,
    trigger: run.trigger,
    stats: { ...emptyStats(), ...run.stats },
    error: run.error,
  };
}

/**
 * Queues an audit of the workspace in the caller's transaction. One audit per workspace is queued or
 * running at a time (the queue's dedupe key): asking again returns that run; what is asked for while
 * it already runs is remembered and a follow-up run covers it when it finishes.
 */
export async function requestAudit(
  trx: Kysely<Database>,
  deps: Pick<AppDeps, 'clock'>,
  scope: Scope,
  frameworks: FrameworkId[],
  trigger: string,
  requestedBy: string | null,
): Promise<Run> {
  const now = deps.clock.now();
  const { id, deduplicated } = await enqueueJob(trx, deps.clock, {
    kind: AUDIT_JOB,
    tenantId: scope.tenantId,
    workspaceId: scope.workspaceId,
    dedupeKey: `audit:${scope.workspaceId}`,
    maxAttempts: 3,
    payload: {},
  });
  if (!deduplicated) {
    return trx
      .insertInto('audit_runs')
      .values({
        id,
        tenant_id: scope.tenantId,
        workspace_id: scope.workspaceId,
        status: 'queued',
        frameworks,
        pending_frameworks: [],
        trigger,
        requested_by: requestedBy,
        stats: JSON.stringify({}),
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }
  // Merge into the live run: widen a queued run (it has not read anything yet), and remember for a
  // running one every framework asked for, those it audits too: it may have read the workspace before
  // the writes that came with this request (an agent's report, a user's import), and a follow-up run
  // audits them. Re-audits read only what changed, so that follow-up costs what changed.
  const run = await trx.selectFrom('audit_runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const column = run.status === 'queued' ? 'frameworks' : 'pending_frameworks';
  const missing = frameworks.filter((f) => !run[column].includes(f));
  if (missing.length === 0) return run;
  return trx
    .updateTable('audit_runs')
    .set({ [column]: sql<string[]>`(SELECT array_agg(DISTINCT f) FROM unnest(${sql.ref(column)} || ${missing}::text[]) f)` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function createAuditRunService(deps: Pick<AppDeps, 'database' | 'clock'>) {
  const db = deps.database.db;
  return {
    async start(scope: Scope, framework: string | undefined, requestedBy: string) {
      const enabled = await enabledFrameworks(db, scope.tenantId);
      let frameworks: FrameworkId[] = enabled;
      if (framework !== undefined) {
        if (!isFrameworkId(framework)) throw unknownFramework(framework);
        if (!enabled.includes(framework)) throw badRequest(`framework "${framework}" is disabled for this tenant`);
        frameworks = [framework];
      }
      if (frameworks.length === 0) throw badRequest('every framework is disabled for this tenant');
      const run = await db.transaction().execute((trx) => requestAudit(trx, deps, scope, frameworks, 'api', requestedBy));
      return presentRun(run);
    },

    async get(scope: Scope, id: string) {
      const run = await db.selectFrom('audit_runs').selectAll().where('id', '=', id).where(inTenant(scope.tenantId)).where(inWorkspace(scope)).executeTakeFirst();
      if (!run) throw notFound('audit run not found');
      return presentRun(run);
    },
  };
}
