import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Selectable } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../../platform/db/scope.js';
import type { RequestContext } from '../../../platform/auth/actor.js';
import { enqueueJob } from '../../../platform/jobs/queue.js';
import { badRequest, conflict, forbidden, gone, notFound } from '../../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../../platform/http/pagination.js';
import { isFrameworkId, unknownFramework } from '../../compliance/index.js';
import { enabledFrameworks } from '../../compliance/index.js';
import { assetGroupName } from '../../applications/index.js';
import { requireStore } from '../export-service.js';
import { checkSignedLink } from './signed-link.js';
import '../tables.js';

export const REPORT_JOB = 'exports.report';
export const REPORT_MAX_ATTEMPTS = 3;
export const REPORT_FORMATS = ['pdf', 'json', 'csv'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const REPORT_CONTENT_TYPES: Record<ReportFormat, string> = { pdf: 'application/pdf', json: 'application/json', csv: 'text/csv; charset=utf-8' };

type ReportRow = Selectable<Database['reports']>;
type Deps = Pick<AppDeps, 'database' | 'clock' | 'artifacts' | 'tokenKey'>;

export function reportUrl(tenantId: string, id: string): string {
  return `/api/v1/tenants/${tenantId}/reports/${id}`;
}

/** queued and running as stored; a succeeded report past its retention reads as expired at once. */
function statusOf(row: ReportRow, now: Date): ReportRow['status'] {
  return row.status === 'succeeded' && row.expires_at && row.expires_at <= now ? 'expired' : row.status;
}

export function presentReport(row: ReportRow, now: Date) {
  const status = statusOf(row, now);
  return {
    id: row.id,
    type: row.type,
    framework: row.framework,
    format: row.format,
    asset_group_id: row.asset_group_id,
    status,
    status_url: reportUrl(row.tenant_id, row.id),
    download_url: status === 'succeeded' ? `${reportUrl(row.tenant_id, row.id)}/download` : null,
    file_name: row.file_name,
    content_type: row.content_type,
    size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
    summary: (row.summary as { overall_score: number; total_findings: number } | null) ?? null,
    attempts: row.attempts,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    expires_at: row.expires_at,
    ...(status === 'failed' ? { error: row.error ?? 'report failed' } : {}),
  };
}

export interface GenerateBody {
  type?: 'compliance';
  format?: ReportFormat;
  framework?: string;
  asset_group_id?: string;
}

/** Compliance reports (PDF, JSON, CSV) built on the queue into the artifact store. */
export function createReportService(deps: Deps) {
  const db = deps.database.db;

  async function row(scope: Scope, id: string): Promise<ReportRow> {
    const found = await db.selectFrom('reports').selectAll().where('id', '=', id).where(inTenant(scope.tenantId)).where(inWorkspace(scope)).executeTakeFirst();
    if (!found) throw notFound('report not found');
    return found;
  }

  async function file(found: ReportRow): Promise<{ stream: Readable; contentType: string; fileName: string; size: number | null }> {
    const store = requireStore(deps);
    const status = statusOf(found, deps.clock.now());
    if (status === 'queued' || status === 'running') throw conflict(`report is not finished (status ${status})`, { status });
    if (status === 'failed') throw conflict(`report failed: ${found.error ?? 'unknown error'}`, { status });
    if (status === 'expired') throw gone('report expired: its file was deleted after the retention period');
    const stream = found.artifact_key ? await store.get(found.artifact_key) : null;
    if (!stream) throw gone('report file is no longer available');
    return {
      stream,
      contentType: found.content_type ?? 'application/octet-stream',
      fileName: found.file_name ?? found.id,
      size: found.size_bytes === null ? null : Number(found.size_bytes),
    };
  }

  return {
    async generate(context: RequestContext, body: GenerateBody) {
      requireStore(deps);
      const { scope } = context;
      const framework = body.framework ?? null;
      if (framework !== null) {
        if (!isFrameworkId(framework)) throw unknownFramework(framework);
        if (!(await enabledFrameworks(db, scope.tenantId)).includes(framework)) throw badRequest(`framework "${framework}" is disabled for this tenant`);
      }
      const groupId = body.asset_group_id ?? null;
      if (groupId !== null) {
        const group = await assetGroupName(db, scope, groupId);
        if (!group) throw badRequest(`asset_group_id: no asset group ${groupId} in this workspace`);
      }
      const now = deps.clock.now();
      const created = await db.transaction().execute(async (trx) => {
        const id = randomUUID();
        await enqueueJob(trx, deps.clock, { id, kind: REPORT_JOB, tenantId: scope.tenantId, workspaceId: scope.workspaceId, maxAttempts: REPORT_MAX_ATTEMPTS });
        return trx
          .insertInto('reports')
          .values({
            id,
            tenant_id: scope.tenantId,
            workspace_id: scope.workspaceId,
            type: body.type ?? 'compliance',
            framework,
            format: body.format ?? 'pdf',
            asset_group_id: groupId,
            status: 'queued',
            attempts: 0,
            requested_by: `${context.actor.type}:${context.actor.id}`,
            created_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      return presentReport(created, now);
    },

    async list(scope: Scope, page: PageRequest) {
      requireStore(deps);
      const base = db.selectFrom('reports').where(inTenant(scope.tenantId)).where(inWorkspace(scope));
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      const now = deps.clock.now();
      return toPage(
        rows.map((r) => presentReport(r, now)),
        Number(count.n),
        page,
      );
    },

    async get(scope: Scope, id: string) {
      requireStore(deps);
      return presentReport(await row(scope, id), deps.clock.now());
    },

    /** 409 while queued or running and for a failed report, 410 once expired. */
    async download(scope: Scope, id: string) {
      requireStore(deps);
      return file(await row(scope, id));
    },

    /** The file behind a signed link (report.generated's download_url): 403 for a bad or expired link. */
    async downloadSigned(tenantId: string, id: string, expires: number, signature: string) {
      requireStore(deps);
      const verdict = checkSignedLink(await deps.tokenKey(), tenantId, id, expires, signature, deps.clock.now());
      if (verdict === 'invalid') throw forbidden('invalid download link');
      if (verdict === 'expired') throw forbidden('download link expired');
      const found = await db.selectFrom('reports').selectAll().where('id', '=', id).where(inTenant(tenantId)).executeTakeFirst();
      if (!found) throw notFound('report not found');
      return file(found);
    },
  };
}
