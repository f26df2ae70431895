import { sql } from 'kysely';
import type { AppDeps } from '../../deps.js';
import { json } from '../../platform/db/schema.js';
import type { JobDefinition } from '../../platform/jobs/definition.js';
import { upsertNodes } from '../graph/index.js';
import { upsertEdges } from '../graph/index.js';
import { runPlugins, type PluginConfig } from './run-plugins.js';
import type { DiscoveryPlugin } from './schemas.js';
import { DISCOVERY_JOB, DISCOVERY_MAX_ATTEMPTS, emitJobEvent } from './discovery-service.js';
import { resolveJobCredentials } from './job-credentials.js';
import { auditWorkspace } from './audit-workspace.js';

interface DiscoveryResult {
  stats: { nodes_discovered: number; nodes_updated: number; findings_created: number; findings_resolved: number };
  details: Record<string, unknown>;
  warnings: string[];
}

/** The uploaded state is dropped from the row when the job ends: it may hold a whole estate's secrets. */
const dropState = sql<string>`config #- '{terraform-state,state}'`;

/**
 * A discovery job: runs its plugins, upserts what they found into the workspace's graph, then audits
 * the workspace (so the run's stats carry the findings it created and resolved, and score changes
 * name this job as their trigger). Upserts are idempotent, so a retried attempt converges.
 */
export function discoveryJob(deps: Pick<AppDeps, 'database' | 'clock' | 'log' | 'config' | 'tokenKey'>): JobDefinition {
  const db = deps.database.db;
  return {
    kind: DISCOVERY_JOB,
    maxAttempts: DISCOVERY_MAX_ATTEMPTS,
    leaseMs: 120_000,
    async run(_payload, ctx): Promise<DiscoveryResult | { skipped: string }> {
      const now = ctx.clock.now();
      const row = await db.transaction().execute(async (trx) => {
        const job = await trx
          .updateTable('discovery_jobs')
          .set({ status: 'running', started_at: sql`coalesce(started_at, ${now})`, attempts: ctx.job.attempts, error: null })
          .where('id', '=', ctx.job.id)
          .where('status', 'in', ['queued', 'running'])
          .returningAll()
          .executeTakeFirst();
        // job.started once per job, on its first attempt, not again on a retry.
        if (job && ctx.job.attempts === 1) await emitJobEvent(trx, deps.clock, 'job.started', job);
        return job ?? null;
      });
      if (!row) return { skipped: 'job cancelled or deleted' };
      const scope = { tenantId: row.tenant_id, workspaceId: row.workspace_id };

      const plugins = row.plugins as DiscoveryPlugin[];
      const config = row.config as PluginConfig;
      // Every source's credentials before the first read: the tenant's connection, or the operator's grant.
      const credentials = await resolveJobCredentials(deps, scope, row.id, plugins, config);
      const found = await runPlugins(plugins, config, { credentials, maxStateBytes: deps.config.discoveryStateMaxBytes }, ctx.signal);
      ctx.signal.throwIfAborted();
      const written = await upsertNodes(db, scope, found.nodes, ctx.clock.now(), false);
      const edges = await upsertEdges(db, scope, found.edges, ctx.clock.now());
      await ctx.heartbeat();

      const audit = await auditWorkspace(deps, scope, row.id, ctx);
      return {
        stats: {
          nodes_discovered: found.nodes.length,
          nodes_updated: written.updated,
          findings_created: audit.findings_created,
          findings_resolved: audit.findings_resolved,
        },
        details: {
          nodes_created: written.created,
          edges_discovered: found.edges.length,
          edges_created: edges.created,
          findings_reopened: audit.findings_reopened,
          resources_evaluated: audit.resources_evaluated,
          plugins: found.plugins,
        },
        warnings: found.warnings.slice(0, 200),
      };
    },

    async onSucceeded(job, result, trx) {
      const r = result as DiscoveryResult | { skipped: string };
      if ('skipped' in r) return;
      const now = deps.clock.now();
      const row = await trx
        .updateTable('discovery_jobs')
        .set({
          status: 'completed',
          attempts: job.attempts,
          completed_at: now,
          stats: sql`jsonb_build_object(
            'nodes_discovered', ${r.stats.nodes_discovered}::int, 'nodes_updated', ${r.stats.nodes_updated}::int,
            'findings_created', ${r.stats.findings_created}::int, 'findings_resolved', ${r.stats.findings_resolved}::int,
            'duration_seconds', greatest(0, round(extract(epoch FROM (${now}::timestamptz - started_at))))::int)`,
          details: json(r.details),
          warnings: json(r.warnings),
          config: dropState,
        })
        .where('id', '=', job.id)
        // A job cancelled while it ran stays cancelled.
        .where('status', '=', 'running')
        .returningAll()
        .executeTakeFirst();
      if (row) await emitJobEvent(trx, deps.clock, 'job.completed', row);
    },

    async onFailed(job, error, trx) {
      const row = await trx
        .updateTable('discovery_jobs')
        .set({ status: 'failed', attempts: job.attempts, error: error || 'discovery failed', completed_at: deps.clock.now(), config: dropState })
        .where('id', '=', job.id)
        .where('status', 'in', ['queued', 'running'])
        .returningAll()
        .executeTakeFirst();
      if (row) await emitJobEvent(trx, deps.clock, 'job.failed', row);
    },
  };
}
