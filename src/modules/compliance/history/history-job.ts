import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import type { Database } from '../../../platform/db/schema.js';
import type { JobDefinition } from '../../../platform/jobs/definition.js';
import type { ScheduleDefinition } from '../../../platform/jobs/scheduler.js';
import { controlState } from '../controls/control-state.js';
import { allRules } from '../rule-catalog.js';
import { enabledFrameworks } from '../settings-service.js';
import { dayOf, OVERALL, recordPoints } from './snapshot.js';

export const HISTORY_JOB = 'compliance.history';

/** Points are kept as they are for this long, then thinned to one per ISO week. */
export const FULL_HISTORY_DAYS = 365;

/** Workspaces given their day point per run of the job; the next hourly run takes the rest. */
const WORKSPACES_PER_RUN = 500;

/** Days back the counter merge looks at: findings are stamped with the clock, so new rows are of recent days. */
const MERGE_DAYS = 7;

/**
 * Hourly: the day point of every workspace that has a history but no point yet today (no audit so
 * far today: acceptances, attestations and resolutions still move its state), and the thinning of
 * points older than a year, and the merge of the per-day finding counters of the last days.
 */
export function historySchedule(): ScheduleDefinition {
  return { name: 'compliance-history', kind: HISTORY_JOB, intervalMs: 3_600_000 };
}

export function historyJob(deps: Pick<AppDeps, 'database'>): JobDefinition {
  const db = deps.database.db;
  return {
    kind: HISTORY_JOB,
    maxAttempts: 3,
    async run(_payload, ctx) {
      const now = ctx.clock.now();
      const today = dayOf(now);
      const due = await db
        .selectFrom('workspaces as w')
        .select(['w.tenant_id', 'w.id'])
        .where(({ exists, not, selectFrom }) =>
          exists(selectFrom('compliance_history as h').select('h.workspace_id').whereRef('h.workspace_id', '=', 'w.id')).and(
            not(
              exists(
                selectFrom('compliance_history as h')
                  .select('h.workspace_id')
                  .whereRef('h.workspace_id', '=', 'w.id')
                  .where('h.kind', '=', 'day')
                  .where('h.point_at', '=', today)
                  .where('h.framework', '=', OVERALL),
              ),
            ),
          ),
        )
        .orderBy('w.id')
        .limit(WORKSPACES_PER_RUN)
        .execute();
      for (const workspace of due) {
        ctx.signal.throwIfAborted();
        const scope = { tenantId: workspace.tenant_id, workspaceId: workspace.id };
        const enabled = await enabledFrameworks(db, scope.tenantId);
        const state = await controlState(db, scope, enabled, await allRules(db, scope.tenantId), now);
        await db.transaction().execute((trx) => recordPoints(trx, scope, state, now, null));
        await ctx.heartbeat();
      }
      return { day_points: due.length, thinned: await thinHistory(db, now), counters_merged: await mergeDailyCounts(db, now) };
    },
  };
}

/**
 * Points older than FULL_HISTORY_DAYS are thinned to the last of each ISO week (UTC), per workspace,
 * kind and framework: a week keeps at least one point, so no stretch of history is ever lost. A week
 * that straddles the limit keeps its recent points until they age too.
 */
export async function thinHistory(db: Kysely<Database>, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - FULL_HISTORY_DAYS * 86_400_000);
  const { numAffectedRows } = await sql`
    DELETE FROM compliance_history h
    USING (
      SELECT workspace_id, kind, framework, date_trunc('week', point_at AT TIME ZONE 'UTC') AS week, max(point_at) AS kept
      FROM compliance_history
      WHERE point_at < ${cutoff}
      GROUP BY 1, 2, 3, 4
      HAVING count(*) > 1
    ) w
    WHERE h.point_at < ${cutoff} AND h.workspace_id = w.workspace_id AND h.kind = w.kind AND h.framework = w.framework
      AND date_trunc('week', h.point_at AT TIME ZONE 'UTC') = w.week AND h.point_at < w.kept`.execute(db);
  return Number(numAffectedRows ?? 0);
}

/**
 * The finding triggers only insert counter rows (deltas: no two transactions wait on one row); this
 * merges each (workspace, day, severity) of the last MERGE_DAYS days that has several into one, in
 * one statement: rows inserted meanwhile are not in its snapshot and stay as they are, so no count is
 * lost or doubled. Readers sum whatever rows there are, merged or not. Returns the rows removed.
 */
export async function mergeDailyCounts(db: Kysely<Database>, now: Date): Promise<number> {
  const since = new Date(now.getTime() - MERGE_DAYS * 86_400_000).toISOString().slice(0, 10);
  const { rows } = await sql<{ removed: number }>`
    WITH keys AS (
      SELECT workspace_id, day, severity
      FROM finding_daily_counts
      WHERE day >= ${since}::date
      GROUP BY 1, 2, 3
      HAVING count(*) > 1
    ),
    merged AS (
      DELETE FROM finding_daily_counts c
      USING keys k
      WHERE c.workspace_id = k.workspace_id AND c.day = k.day AND c.severity = k.severity
      RETURNING c.*
    ),
    inserted AS (
      INSERT INTO finding_daily_counts (tenant_id, workspace_id, day, severity, opened, resolved, reopened, resolve_seconds)
      SELECT tenant_id, workspace_id, day, severity, sum(opened), sum(resolved), sum(reopened), sum(resolve_seconds)
      FROM merged
      GROUP BY 1, 2, 3, 4
      RETURNING 1
    )
    SELECT ((SELECT count(*) FROM merged) - (SELECT count(*) FROM inserted))::int AS removed`.execute(db);
  return rows[0]?.removed ?? 0;
}
