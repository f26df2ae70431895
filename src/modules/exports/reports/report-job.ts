import type { Readable } from 'node:stream';
import type { AppDeps } from '../../../deps.js';
import { json } from '../../../platform/db/schema.js';
import { emitEvent } from '../../../platform/events/outbox.js';
import { PermanentJobError, type JobDefinition } from '../../../platform/jobs/definition.js';
import { STORAGE_ABSENT } from '../export-service.js';
import { startArtifactRow, succeededColumns, type ArtifactFile } from '../artifact-row.js';
import { collectReport } from './report-data.js';
import { csvReport, jsonReport } from './render-data.js';
import { pdfReport } from './render-pdf.js';
import { REPORT_CONTENT_TYPES, REPORT_JOB, REPORT_MAX_ATTEMPTS, type ReportFormat } from './report-service.js';
import { LINK_TTL_MS, signedReportUrl } from './signed-link.js';

interface ReportResult extends ArtifactFile {
  summary: { overall_score: number; total_findings: number };
  finished_at: string;
  expires_at: string;
  download_url: string;
  download_expires: string;
}

function fileName(format: ReportFormat, framework: string | null, at: Date): string {
  const stamp = at.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return `compliance-report-${framework ?? 'all-frameworks'}-${stamp}.${format}`;
}

/**
 * Builds one report: reads the findings and scores, streams the file into the artifact store, and on
 * success announces it with report.generated (its download_url a signed link valid for a day, never
 * past the retention); the last failed attempt announces report.failed.
 */
export function reportJob(deps: Pick<AppDeps, 'database' | 'clock' | 'artifacts' | 'config' | 'log' | 'tokenKey'>): JobDefinition {
  const db = deps.database.db;
  return {
    kind: REPORT_JOB,
    maxAttempts: REPORT_MAX_ATTEMPTS,
    leaseMs: 60_000,
    async run(_payload, ctx): Promise<ReportResult | { skipped: string }> {
      const row = await startArtifactRow(db, 'reports', ctx.job, ctx.clock.now());
      if (!row) return { skipped: 'report deleted' };
      if (!deps.artifacts) throw new PermanentJobError(STORAGE_ABSENT);
      const scope = { tenantId: row.tenant_id, workspaceId: row.workspace_id };
      const now = ctx.clock.now();
      let content;
      try {
        content = await collectReport(db, scope, now, { reportId: row.id, framework: row.framework, assetGroupId: row.asset_group_id });
      } catch (error) {
        // The asset group was deleted after the request: no retry brings it back.
        if ((error as { status?: number }).status === 404 || /no longer exists/.test((error as Error).message)) throw new PermanentJobError((error as Error).message);
        throw error;
      }
      const format = row.format as ReportFormat;
      const key = `tenants/${row.tenant_id}/reports/${row.id}.${format}`;
      let stream: Readable;
      let rendered: Promise<void> = Promise.resolve();
      if (format === 'pdf') {
        const pdf = pdfReport(content);
        stream = pdf.stream;
        rendered = pdf.done;
      } else stream = format === 'json' ? jsonReport(content) : csvReport(content);
      const [put] = await Promise.all([deps.artifacts.put(key, stream, { contentType: REPORT_CONTENT_TYPES[format] }), rendered]);
      const finished = ctx.clock.now();
      const expires = new Date(finished.getTime() + deps.config.exportRetentionMs);
      const linkExpires = new Date(Math.min(finished.getTime() + LINK_TTL_MS, expires.getTime()));
      return {
        artifact_key: key,
        size_bytes: put.size,
        content_type: REPORT_CONTENT_TYPES[format],
        file_name: fileName(format, row.framework, row.created_at),
        summary: { overall_score: content.summary.overall_score, total_findings: content.summary.total_findings },
        finished_at: finished.toISOString(),
        expires_at: expires.toISOString(),
        // Signed here, outside the completing transaction: loading the key may query the database.
        download_url: signedReportUrl(await deps.tokenKey(), row.tenant_id, row.id, linkExpires),
        download_expires: linkExpires.toISOString(),
      };
    },

    async onSucceeded(job, result, trx) {
      const r = result as ReportResult | { skipped: string };
      if ('skipped' in r) return;
      const row = await trx
        .updateTable('reports')
        .set({ ...succeededColumns(job.attempts, r, new Date(r.finished_at), new Date(r.expires_at)), summary: json(r.summary) })
        .where('id', '=', job.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await emitEvent(trx, deps.clock, {
        tenantId: row.tenant_id,
        workspaceId: row.workspace_id,
        type: 'report.generated',
        data: {
          report: {
            id: row.id,
            type: row.type,
            framework: row.framework,
            format: row.format,
            download_url: r.download_url,
            download_expires: r.download_expires,
            size_bytes: r.size_bytes,
          },
        },
      });
    },

    async onFailed(job, error, trx) {
      const row = await trx
        .updateTable('reports')
        .set({ status: 'failed', attempts: job.attempts, error: error || 'report failed', finished_at: deps.clock.now() })
        .where('id', '=', job.id)
        .returningAll()
        .executeTakeFirst();
      if (!row) return;
      await emitEvent(trx, deps.clock, {
        tenantId: row.tenant_id,
        workspaceId: row.workspace_id,
        type: 'report.failed',
        data: { report: { id: row.id, type: row.type, framework: row.framework, format: row.format, error: row.error } },
      });
    },
  };
}
