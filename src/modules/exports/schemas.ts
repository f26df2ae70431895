import { Type } from 'typebox';
import { AnyObject, MAX_PAGE, Nullable, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';

export const ExportParams = Type.Object({ tenantID: Uuid, jobID: Uuid });

export const ExportStart = Type.Object(
  {
    kind: Type.String({ description: 'architecture_diagram or drawio' }),
    params: Type.Optional(
      Type.Unsafe<Record<string, unknown>>({
        type: 'object',
        additionalProperties: true,
        description: 'architecture_diagram: {format: png | svg} (png by default); drawio: none. Unknown params are 400.',
      }),
    ),
  },
  { additionalProperties: false },
);

const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'expired'] as const;

export const ExportJob = Type.Object({
  job_id: Uuid,
  kind: Type.String(),
  params: AnyObject,
  status: StringEnum(STATUSES),
  status_url: Type.String(),
  download_url: Nullable(Type.String()),
  already_active: Type.Boolean({ description: 'true when an identical queued or running job was returned instead of a new one' }),
  reason: Type.String({ description: 'empty on a normal start' }),
  size_bytes: Nullable(Type.Integer()),
  node_count: Nullable(Type.Integer()),
  content_type: Nullable(Type.String()),
  file_name: Nullable(Type.String()),
  attempts: Type.Integer({ description: 'attempts made, at most 3' }),
  max_attempts: Type.Integer(),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  expires_at: Nullable(Timestamp),
  error: Type.Optional(Type.String({ description: 'present for a failed job: what went wrong on the last attempt' })),
});

export const ExportList = Type.Object({
  items: Type.Array(ExportJob),
  total: Type.Integer(),
  limit: Nullable(Type.Integer({ description: 'null when every export from offset on is returned' })),
  offset: Type.Integer(),
  has_more: Type.Boolean(),
  page: Type.Optional(Type.Integer({ description: 'present when the request paged with page/per_page' })),
  per_page: Type.Optional(Type.Integer({ description: 'present when the request paged with page/per_page' })),
  total_pages: Type.Optional(Type.Integer({ description: 'present when the request paged with page/per_page' })),
});

/** Per-page size of GET /exports?page= when per_page is not given, as on every other list. */
export const EXPORTS_PER_PAGE = 50;

/**
 * Two ways to page, one at a time (a mix is 400): `limit`/`offset`, or `page`/`per_page` as on
 * every other list. No schema defaults: the service must see which ones the client sent.
 */
export const ExportListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 0, description: 'no default and never capped: without it every export is returned' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, description: 'exports to skip; 0 when absent' })),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, description: '1 when absent and per_page is given; not with limit or offset' })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: `${EXPORTS_PER_PAGE} when absent and page is given; not with limit or offset` })),
  },
  { additionalProperties: false },
);

export const DiagramQuery = Type.Object({ format: Type.Optional(StringEnum(['png', 'svg'] as const, { default: 'png' })) }, { additionalProperties: false });
export const DrawioQuery = Type.Object({}, { additionalProperties: false });

export const SyncAccepted = Type.Object({
  job_id: Uuid,
  status_url: Type.String(),
  reason: Type.String(),
});

export const BinaryFile = Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'the file' });
