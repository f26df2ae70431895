import type { Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';

export type ExportKind = 'architecture_diagram' | 'drawio';
export type ExportStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'expired';

/** Export and report tables (migration 0009; discovery_jobs is in modules/discovery/tables.ts). */
declare module '../../platform/db/schema.js' {
  interface Database {
    exports: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      kind: ExportKind;
      params: Json<Record<string, unknown>>;
      status: ExportStatus;
      attempts: number;
      origin: 'api' | 'sync';
      requested_by: string | null;
      artifact_key: string | null;
      content_type: string | null;
      file_name: string | null;
      size_bytes: string | number | null;
      node_count: number | null;
      error: string | null;
      created_at: Timestamp;
      started_at: NullableTimestamp;
      finished_at: NullableTimestamp;
      expires_at: NullableTimestamp;
      expired_at: NullableTimestamp;
    };
    reports: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      type: string;
      framework: string | null;
      format: 'pdf' | 'json' | 'csv';
      asset_group_id: string | null;
      status: ExportStatus;
      attempts: number;
      requested_by: string | null;
      artifact_key: string | null;
      content_type: string | null;
      file_name: string | null;
      size_bytes: string | number | null;
      summary: Json<Record<string, unknown>> | null;
      error: string | null;
      created_at: Timestamp;
      started_at: NullableTimestamp;
      finished_at: NullableTimestamp;
      expires_at: NullableTimestamp;
      expired_at: NullableTimestamp;
    };
  }
}

export {};
