import type { AppDeps } from '../../deps.js';
import type { Scope } from '../../platform/db/scope.js';
import type { JobContext } from '../../platform/jobs/definition.js';
import { allRules, databaseAuditLock, enabledFrameworks, rescoreFindings, runAudit } from '../compliance/index.js';

/**
 * The audit after a discovery job or an import changed the workspace's graph. The audit is
 * incremental (a node whose content and rule set are unchanged is not evaluated again), so it
 * evaluates what changed. It runs after any audit of the workspace already running (another
 * discovery job, a queued audit): one at a time. The stored risk scores then follow the new graph
 * and the audit's findings (compliance/findings/rescore.ts).
 */
export async function auditWorkspace(deps: Pick<AppDeps, 'database'>, scope: Scope, runId: string, ctx: Pick<JobContext, 'clock' | 'signal'>) {
  const db = deps.database.db;
  const enabled = await enabledFrameworks(db, scope.tenantId);
  const stats = await runAudit({
    db,
    clock: ctx.clock,
    scope,
    runId,
    frameworks: enabled,
    enabled,
    rules: await allRules(db, scope.tenantId),
    signal: ctx.signal,
    lock: databaseAuditLock(deps.database),
  });
  await rescoreFindings(db, scope, ctx.clock.now());
  return stats;
}
