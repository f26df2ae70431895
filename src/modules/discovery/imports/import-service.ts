import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import type { Database } from '../../../platform/db/schema.js';
import { inScope, type Scope } from '../../../platform/db/scope.js';
import type { RequestContext } from '../../../platform/auth/actor.js';
import { auditInScope } from '../../../platform/audit/audit-log.js';
import { enqueueJob } from '../../../platform/jobs/queue.js';
import { notFound } from '../../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../../platform/http/pagination.js';
import type { ImportFormat } from './import-record.js';
import type { ReceivedImport } from './receive-upload.js';
import './tables.js';

export const IMPORT_JOB = 'discovery.import';
export const IMPORT_MAX_ATTEMPTS = 3;

export type ImportRow = Selectable<Database['imports']>;
type Deps = Pick<AppDeps, 'database' | 'clock'>;

export function importUrl(tenantId: string, id: string): string {
  return `/api/v1/tenants/${tenantId}/imports/${id}`;
}

export function presentImport(row: ImportRow) {
  return {
    id: row.id,
    format: row.format as ImportFormat,
    source: row.source,
    status: row.status,
    status_url: importUrl(row.tenant_id, row.id),
    file_name: row.file_name,
    size_bytes: Number(row.size_bytes),
    counts: {
      records: row.records,
      findings_created: row.findings_created,
      findings_updated: row.findings_updated,
      findings_resolved: row.findings_resolved,
      findings_reopened: row.findings_reopened,
      nodes: row.nodes,
      errors: row.errors_count,
    },
    errors: row.errors,
    error: row.error,
    created_by: row.created_by,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}

export function createImportService(deps: Deps) {
  const db = deps.database.db;
  return {
    /** The import of a stored, validated file, queued for the job in the same transaction; audited. */
    async create(context: RequestContext, file: ReceivedImport) {
      const { scope } = context;
      const row = await db.transaction().execute(async (trx) => {
        const created = await trx
          .insertInto('imports')
          .values({
            id: randomUUID(),
            tenant_id: scope.tenantId,
            workspace_id: scope.workspaceId,
            format: file.format,
            status: 'queued',
            file_name: file.fileName,
            size_bytes: file.size,
            artifact_key: file.key,
            created_by: `${context.actor.type}:${context.actor.id}`,
            created_at: deps.clock.now(),
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await enqueueJob(trx, deps.clock, { id: created.id, kind: IMPORT_JOB, tenantId: scope.tenantId, workspaceId: scope.workspaceId, maxAttempts: IMPORT_MAX_ATTEMPTS });
        // Imports write findings and nodes: who brought which file is audited.
        await auditInScope(trx, deps.clock, context, {
          action: 'import.created',
          targetType: 'import',
          targetId: created.id,
          details: { format: file.format, file_name: file.fileName, size_bytes: file.size },
        });
        return created;
      });
      return presentImport(row);
    },

    async list(scope: Scope, filter: { status?: ImportRow['status']; format?: ImportFormat }, page: PageRequest) {
      let q = db.selectFrom('imports').where(inScope(scope));
      if (filter.status) q = q.where('status', '=', filter.status);
      if (filter.format) q = q.where('format', '=', filter.format);
      const [rows, count] = await Promise.all([
        q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.perPage).offset(offsetOf(page)).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(rows.map(presentImport), Number(count.n), page);
    },

    async get(scope: Scope, id: string) {
      const row = await db.selectFrom('imports').selectAll().where(inScope(scope)).where('id', '=', id).executeTakeFirst();
      if (!row) throw notFound('import not found');
      return presentImport(row);
    },
  };
}
