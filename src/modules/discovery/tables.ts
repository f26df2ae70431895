import type { Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';

export type DiscoveryStatus = 'pending' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** Discovery runs (migration 0009); the cloud connections are in connections/table.ts. */
declare module '../../platform/db/schema.js' {
  interface Database {
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
  }
}

export {};
