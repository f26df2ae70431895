import type { AppDeps } from '../../deps.js';
import { PermanentJobError, type JobDefinition } from '../../platform/jobs/definition.js';
import { CONTENT_TYPES } from './render/render.js';
import { renderInWorker } from './render/runner.js';
import { loadRenderGraph } from './graph-source.js';
import { startArtifactRow, succeededColumns, type ArtifactFile } from './artifact-row.js';
import { EXPORT_JOB, EXPORT_MAX_ATTEMPTS, STORAGE_ABSENT, fileNameOf, formatOf } from './export-service.js';

/**
 * A short lease, renewed by the worker every third of it while the render runs in its own thread:
 * when a worker process dies, its export is retried after at most this long.
 */
export const EXPORT_LEASE_MS = 15_000;

interface ExportResult extends ArtifactFile {
  node_count: number;
}

/**
 * Builds one export: reads the graph, renders it in a worker thread and streams the file into the
 * artifact store. The export row follows the job: running with its attempt, then succeeded (with
 * size and retention end) or failed with the reason (also when the worker died on the last attempt).
 */
export function exportJob(deps: Pick<AppDeps, 'database' | 'clock' | 'artifacts' | 'config' | 'log'>): JobDefinition {
  const db = deps.database.db;
  return {
    kind: EXPORT_JOB,
    maxAttempts: EXPORT_MAX_ATTEMPTS,
    leaseMs: EXPORT_LEASE_MS,
    backoffMs: (attempt) => 2_000 * attempt,
    async run(_payload, ctx): Promise<ExportResult | { skipped: string }> {
      const row = await startArtifactRow(db, 'exports', ctx.job, ctx.clock.now());
      if (!row) return { skipped: 'export deleted' };
      if (!deps.artifacts) throw new PermanentJobError(STORAGE_ABSENT);
      const scope = { tenantId: row.tenant_id, workspaceId: row.workspace_id };
      const now = ctx.clock.now();
      const graph = await loadRenderGraph(db, scope, now);
      const format = formatOf(row.kind, row.params);
      const run = renderInWorker(graph, format, { signal: ctx.signal, generatedAt: now.toISOString() });
      const key = `tenants/${row.tenant_id}/exports/${row.id}.${format}`;
      const contentType = CONTENT_TYPES[format];
      const put = await deps.artifacts.put(key, run.stream, { contentType });
      const stats = await run.done;
      ctx.log.info({ export_id: row.id, format, ...stats, size_bytes: put.size }, 'export rendered');
      return {
        artifact_key: key,
        size_bytes: put.size,
        content_type: contentType,
        file_name: fileNameOf(row.kind, row.params, row.id, row.created_at),
        node_count: graph.nodes.length,
      };
    },
    async onSucceeded(job, result, trx) {
      const r = result as ExportResult | { skipped: string };
      if ('skipped' in r) return;
      const now = deps.clock.now();
      await trx
        .updateTable('exports')
        .set({ ...succeededColumns(job.attempts, r, now, new Date(now.getTime() + deps.config.exportRetentionMs)), node_count: r.node_count })
        .where('id', '=', job.id)
        .execute();
    },
    async onFailed(job, error, trx) {
      await trx
        .updateTable('exports')
        .set({ status: 'failed', attempts: job.attempts, error: error || 'export failed', finished_at: deps.clock.now() })
        .where('id', '=', job.id)
        .execute();
    },
  };
}
