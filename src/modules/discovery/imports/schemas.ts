import { Type } from 'typebox';
import { Nullable, PageQuery, Paged, StringEnum, Timestamp, Uuid } from '../../../platform/http/schemas.js';
import { IMPORT_FORMATS } from './import-record.js';

export const IMPORT_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;

export const ImportParams = Type.Object({ tenantID: Uuid, importID: Uuid });

export const ImportResource = Type.Object({
  id: Uuid,
  format: StringEnum(IMPORT_FORMATS),
  source: Type.String({ description: "the tool the findings are from ('prowler'); '' until the job has read a finding" }),
  status: StringEnum(IMPORT_STATUSES),
  status_url: Type.String(),
  file_name: Type.String(),
  size_bytes: Type.Integer({ description: 'the file as stored (unpacked when it was uploaded gzipped)' }),
  counts: Type.Object({
    records: Type.Integer({ description: 'records read so far' }),
    findings_created: Type.Integer(),
    findings_updated: Type.Integer(),
    findings_resolved: Type.Integer({ description: "open findings of the import's scope it no longer reports, and those it reports passing" }),
    findings_reopened: Type.Integer(),
    nodes: Type.Integer({ description: 'graph nodes created for resources the graph did not know, or upserted from configuration items' }),
    errors: Type.Integer({ description: 'records that could not be read (all of them; the list keeps the first 1,000)' }),
  }),
  errors: Type.Array(Type.Object({ record: Type.Integer({ description: 'position in the file, from 0' }), message: Type.String() })),
  error: Nullable(Type.String({ description: 'why the import failed' })),
  created_by: Nullable(Type.String()),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
});

export const ImportList = Paged(ImportResource);

export const ImportListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(IMPORT_STATUSES, { description: 'only imports in this state' })),
    format: Type.Optional(StringEnum(IMPORT_FORMATS, { description: 'only imports of this format' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

/** Documents the form; the handler reads the parts itself. */
export const ImportForm = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  properties: {
    format: { type: 'string', enum: [...IMPORT_FORMATS], description: 'the file format; detected from the first 64 KiB when absent. Must precede the file part.' },
    file: { type: 'string', format: 'binary', description: 'required: the scanner output (gzip accepted), at most CONTROLGRAPH_IMPORT_MAX_BYTES (512 MiB) unpacked' },
  },
  description: 'multipart/form-data: the optional field format, then one file part named file',
});
