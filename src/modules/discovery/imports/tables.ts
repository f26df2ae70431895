import type { ColumnType } from 'kysely';
import type { NullableTimestamp, Timestamp } from '../../../platform/db/schema.js';

export type ImportStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface StoredRecordError {
  record: number;
  message: string;
}

type Counter = ColumnType<number, number | undefined, number>;

/** Scanner imports (migration 0036). */
declare module '../../../platform/db/schema.js' {
  interface Database {
    imports: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      format: string;
      source: ColumnType<string, string | undefined, string>;
      status: ImportStatus;
      file_name: string;
      /** bigint: the driver may return it as a string. */
      size_bytes: ColumnType<number | string, number, number>;
      artifact_key: string | null;
      records: Counter;
      findings_created: Counter;
      findings_updated: Counter;
      findings_resolved: Counter;
      findings_reopened: Counter;
      nodes: Counter;
      errors_count: Counter;
      errors: ColumnType<StoredRecordError[], string | undefined, string>;
      error: string | null;
      created_by: string | null;
      created_at: Timestamp;
      started_at: NullableTimestamp;
      finished_at: NullableTimestamp;
    };
  }
}

export {};
