import type { JobDefinition } from '../../platform/jobs/definition.js';
import './tables.js';

export const PRUNE_JOB = 'agents.prune-reports';
/** Received-report log rows are kept this long (hosts report every 5 minutes: 8,640 rows per host). */
export const REPORT_LOG_RETENTION_MS = 30 * 24 * 3600_000;

export const pruneJob = (): JobDefinition => ({
  kind: PRUNE_JOB,
  maxAttempts: 3,
  async run(_payload, ctx) {
    const cutoff = new Date(ctx.clock.now().getTime() - REPORT_LOG_RETENTION_MS);
    const result = await ctx.db.deleteFrom('agent_reports').where('received_at', '<', cutoff).executeTakeFirst();
    return { deleted: Number(result.numDeletedRows) };
  },
});
