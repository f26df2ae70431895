import type { ColumnType, Generated } from 'kysely';

/**
 * The Kysely database type. Each module adds its tables to this interface by declaration merging
 * (`declare module '../../platform/db/schema.js' { interface Database { ... } }`), so a new domain
 * only adds a folder and a migration file.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Database extends PlatformTables {}

/** Timestamps are written as Date and read back as Date (pg parses timestamptz). */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;
/** jsonb columns: objects in, objects out. Written through `json()` so pg sends them as JSON text. */
export type Json<T = unknown> = ColumnType<T, string, string>;

export interface PlatformTables {
  schema_migrations: {
    version: string;
    name: string;
    checksum: string;
    applied_at: Timestamp;
  };
  system_settings: {
    key: string;
    value: Json;
    updated_at: Timestamp;
  };
  jobs: {
    id: string;
    kind: string;
    payload: Json<Record<string, unknown>>;
    tenant_id: string | null;
    workspace_id: string | null;
    status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
    attempts: number;
    max_attempts: number;
    run_at: Timestamp;
    lease_token: string | null;
    lease_owner: string | null;
    lease_expires_at: NullableTimestamp;
    dedupe_key: string | null;
    last_error: string | null;
    result: Json<unknown> | null;
    created_at: Timestamp;
    started_at: NullableTimestamp;
    finished_at: NullableTimestamp;
  };
  job_schedules: {
    name: string;
    kind: string;
    payload: Json<Record<string, unknown>>;
    interval_ms: ColumnType<number, number, number>;
    next_run_at: Timestamp;
    last_run_at: NullableTimestamp;
  };
  outbox_events: {
    seq: Generated<string>;
    id: string;
    tenant_id: string;
    workspace_id: string | null;
    type: string;
    data: Json<Record<string, unknown>>;
    created_at: Timestamp;
  };
}

/** Serialises a value for a jsonb column. */
export function json(value: unknown): string {
  return JSON.stringify(value);
}
