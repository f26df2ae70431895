import type { Readable } from 'node:stream';
import type { Kysely, Selectable } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { json } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { enqueueJob } from '../../platform/jobs/queue.js';
import { badRequest, conflict, gone, notFound, unavailable } from '../../platform/http/errors.js';
import type { ArtifactStore } from '../../platform/artifacts/index.js';
import { CONTENT_TYPES, EXTENSIONS, type RenderFormat } from './render/render.js';
import { renderInWorker } from './render/runner.js';
import { loadRenderGraph } from './graph-source.js';
import { countNodes } from '../graph/index.js';
import { exportListWindow, type ExportListRequest } from './list-window.js';
import type { ExportKind, ExportStatus } from './tables.js';
import './tables.js';

export const EXPORT_JOB = 'exports.render';
export const EXPORT_MAX_ATTEMPTS = 3;
/** Synchronous exports answer the file directly up to this many nodes (spec: Limits). */
export const SYNC_EXPORT_MAX_NODES = 500;
export const STORAGE_ABSENT = 'artifact storage not configured';

export type ExportRow = Selectable<Database['exports']>;
type Deps = Pick<AppDeps, 'database' | 'clock' | 'artifacts' | 'config'>;

export const EXPORT_KINDS: readonly ExportKind[] = ['architecture_diagram', 'drawio'];
export const DIAGRAM_FORMATS = ['png', 'svg'] as const;

/** Checks kind and params; returns the normalised params (the dedupe key compares these). */
export function normaliseExport(kind: string, params: Record<string, unknown> | undefined): { kind: ExportKind; params: Record<string, unknown> } {
  if (!(EXPORT_KINDS as readonly string[]).includes(kind)) throw badRequest(`unknown export kind "${kind}": must be one of ${EXPORT_KINDS.join(', ')}`);
  const given = params ?? {};
  const keys = Object.keys(given);
  if (kind === 'drawio') {
    if (keys.length) throw badRequest(`unknown params for drawio: ${keys.join(', ')} (drawio takes none)`, { unknown: keys });
    return { kind, params: {} };
  }
  const unknown = keys.filter((k) => k !== 'format');
  if (unknown.length) throw badRequest(`unknown params for architecture_diagram: ${unknown.join(', ')} (only format)`, { unknown });
  const format = given.format ?? 'png';
  if (typeof format !== 'string' || !(DIAGRAM_FORMATS as readonly string[]).includes(format)) {
    throw badRequest(`params.format must be one of ${DIAGRAM_FORMATS.join(', ')}`);
  }
  return { kind: 'architecture_diagram', params: { format } };
}

export function formatOf(kind: ExportKind, params: Record<string, unknown>): RenderFormat {
  return kind === 'drawio' ? 'drawio' : (params.format as 'png' | 'svg');
}

export function fileNameOf(kind: ExportKind, params: Record<string, unknown>, id: string, at: Date): string {
  const stamp = at.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  const base = kind === 'drawio' ? 'topology' : 'architecture-diagram';
  return `${base}-${stamp}-${id.slice(0, 8)}.${EXTENSIONS[formatOf(kind, params)]}`;
}

export function statusUrl(tenantId: string, id: string): string {
  return `/api/v1/tenants/${tenantId}/exports/${id}`;
}

interface Live {
  job_status: string | null;
  job_attempts: number | null;
}

/** The state a client sees: queued and running follow the queue job; a finished file past its retention is expired. */
export function effectiveStatus(row: ExportRow & Partial<Live>, now: Date): ExportStatus {
  if (row.status === 'succeeded' && row.expires_at && row.expires_at <= now) return 'expired';
  if (row.status === 'queued' || row.status === 'running') {
    if (row.job_status === 'queued' || row.job_status === 'running') return row.job_status;
    if (row.job_status === 'failed' || row.job_status === 'cancelled') return 'failed';
  }
  return row.status;
}

export function presentExport(row: ExportRow & Partial<Live>, now: Date, extra: { already_active?: boolean; reason?: string } = {}) {
  const status = effectiveStatus(row, now);
  const url = statusUrl(row.tenant_id, row.id);
  return {
    job_id: row.id,
    kind: row.kind,
    params: row.params,
    status,
    status_url: url,
    download_url: status === 'succeeded' ? `${url}/download` : null,
    already_active: extra.already_active ?? false,
    reason: extra.reason ?? '',
    size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
    node_count: row.node_count,
    content_type: row.content_type,
    file_name: row.file_name,
    attempts: Math.max(row.attempts, row.job_attempts ?? 0),
    max_attempts: EXPORT_MAX_ATTEMPTS,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    expires_at: row.expires_at,
    ...(status === 'failed' ? { error: row.error ?? 'export failed' } : {}),
  };
}

function withJob(db: Kysely<Database>) {
  return db.selectFrom('exports as x').leftJoin('jobs as j', 'j.id', 'x.id').selectAll('x').select(['j.status as job_status', 'j.attempts as job_attempts']);
}

export function requireStore(deps: Pick<AppDeps, 'artifacts'>): ArtifactStore {
  if (!deps.artifacts) throw unavailable(STORAGE_ABSENT);
  return deps.artifacts;
}

export function createExportService(deps: Deps) {
  const db = deps.database.db;

  async function getRow(scope: Scope, id: string) {
    const row = await withJob(db).where('x.id', '=', id).where(inTenant(scope.tenantId, 'x')).where(inWorkspace(scope, 'x')).executeTakeFirst();
    if (!row) throw notFound('export not found');
    return row;
  }

  return {
    /**
     * Queues an export, or returns the identical one (same kind, params, tenant and workspace) that is
     * queued or running, with already_active true.
     */
    async start(context: RequestContext, body: { kind: string; params?: Record<string, unknown> }, origin: 'api' | 'sync' = 'api') {
      requireStore(deps);
      const { scope } = context;
      const { kind, params } = normaliseExport(body.kind, body.params);
      const now = deps.clock.now();
      const result = await db.transaction().execute(async (trx) => {
        const { id, deduplicated } = await enqueueJob(trx, deps.clock, {
          kind: EXPORT_JOB,
          tenantId: scope.tenantId,
          workspaceId: scope.workspaceId,
          maxAttempts: EXPORT_MAX_ATTEMPTS,
          dedupeKey: `${scope.tenantId}:${scope.workspaceId}:${kind}:${JSON.stringify(params)}`,
          payload: {},
        });
        if (!deduplicated) {
          await trx
            .insertInto('exports')
            .values({
              id,
              tenant_id: scope.tenantId,
              workspace_id: scope.workspaceId,
              kind,
              params: json(params),
              status: 'queued',
              attempts: 0,
              origin,
              requested_by: `${context.actor.type}:${context.actor.id}`,
              created_at: now,
            })
            .execute();
        }
        const row = await withJob(trx).where('x.id', '=', id).executeTakeFirstOrThrow();
        return { row, deduplicated };
      });
      return presentExport(result.row, now, {
        already_active: result.deduplicated,
        reason: result.deduplicated ? 'an identical export is already queued or running' : '',
      });
    },

    async list(scope: Scope, query: ExportListRequest) {
      requireStore(deps);
      const window = exportListWindow(query);
      const { limit, offset } = window;
      let q = withJob(db).where(inTenant(scope.tenantId, 'x')).where(inWorkspace(scope, 'x')).orderBy('x.created_at', 'desc').orderBy('x.id', 'desc').offset(offset);
      // No limit returns every row; a supplied limit is never capped.
      if (limit !== null) q = q.limit(limit);
      const [rows, count] = await Promise.all([
        q.execute(),
        db
          .selectFrom('exports')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where(inTenant(scope.tenantId))
          .where(inWorkspace(scope))
          .executeTakeFirstOrThrow(),
      ]);
      const total = Number(count.n);
      const now = deps.clock.now();
      return {
        items: rows.map((r) => presentExport(r, now)),
        total,
        limit,
        offset,
        has_more: offset + rows.length < total,
        ...(window.perPage !== null ? { page: window.page, per_page: window.perPage, total_pages: Math.ceil(total / window.perPage) } : {}),
      };
    },

    async get(scope: Scope, id: string) {
      requireStore(deps);
      return presentExport(await getRow(scope, id), deps.clock.now());
    },

    /** The finished file: 409 while queued or running and for a failed export, 410 once expired. */
    async download(scope: Scope, id: string): Promise<{ stream: Readable; contentType: string; fileName: string; size: number | null }> {
      const store = requireStore(deps);
      const row = await getRow(scope, id);
      const status = effectiveStatus(row, deps.clock.now());
      if (status === 'queued' || status === 'running') throw conflict(`export is not finished (status ${status})`, { status });
      if (status === 'failed') throw conflict(`export failed: ${row.error ?? 'unknown error'}`, { status });
      if (status === 'expired') throw gone('export expired: its file was deleted after the retention period');
      const stream = row.artifact_key ? await store.get(row.artifact_key) : null;
      if (!stream) throw gone('export file is no longer available');
      return {
        stream,
        contentType: row.content_type ?? 'application/octet-stream',
        fileName: row.file_name ?? `${row.id}`,
        size: row.size_bytes === null ? null : Number(row.size_bytes),
      };
    },

    /**
     * A synchronous export: the file itself up to 500 nodes (or at any size when artifact storage is
     * absent), else a background export job.
     */
    async synchronous(context: RequestContext, kind: ExportKind, params: Record<string, unknown>, signal?: AbortSignal) {
      const { scope } = context;
      const nodes = await countNodes(db, scope);
      if (nodes > SYNC_EXPORT_MAX_NODES && deps.artifacts) {
        const job = await this.start(context, { kind, params }, 'sync');
        return {
          job: {
            job_id: job.job_id,
            status_url: job.status_url,
            reason: `the graph has ${nodes} nodes; above ${SYNC_EXPORT_MAX_NODES} nodes an export runs as a background job${job.already_active ? ' (an identical export is already queued or running)' : ''}`,
          },
        };
      }
      const normal = normaliseExport(kind, params);
      const now = deps.clock.now();
      const graph = await loadRenderGraph(db, scope, now);
      const format = formatOf(normal.kind, normal.params);
      const run = renderInWorker(graph, format, { signal, generatedAt: now.toISOString() });
      return {
        file: {
          stream: run.stream,
          contentType: CONTENT_TYPES[format],
          fileName: fileNameOf(normal.kind, normal.params, 'sync0000', now),
          nodes,
        },
      };
    },
  };
}

export type ExportService = ReturnType<typeof createExportService>;
