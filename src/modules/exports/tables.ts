import type { Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';

export type ExportKind = 'architecture_diagram' | 'drawio';
export type ExportStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'expired';
export type DiscoveryStatus = 'pending' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** Export, discovery and report tables (migration 0009). */
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
    discovery_jobs: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      name: string;
      plugins: string[];
      config: Json<Record<string, unknown>>;
      status: DiscoveryStatus;
      stats: Json<Record<string, number>> | null;
      details: Json<Record<string, unknown>> | null;
      warnings: Json<string[]>;
      error: string | null;
      attempts: number;
      created_by: string | null;
      created_at: Timestamp;
      queued_at: NullableTimestamp;
      started_at: NullableTimestamp;
      completed_at: NullableTimestamp;
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
