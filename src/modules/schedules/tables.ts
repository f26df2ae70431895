import type { Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';

export const SCHEDULE_KINDS = ['discovery', 'audit'] as const;
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number];
export const RUN_STATUSES = ['running', 'succeeded', 'failed', 'cancelled', 'skipped'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What a run repeats: the discovery job to copy, or the frameworks to audit (empty: every enabled one). */
export type ScheduleTarget = { job_id: string } | { frameworks: string[] };

/** Workspace schedules and their runs (migration 0036). */
declare module '../../platform/db/schema.js' {
  interface Database {
    schedules: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      name: string;
      kind: ScheduleKind;
      target: Json<ScheduleTarget>;
      cron: string | null;
      interval_seconds: number | null;
      time_zone: string;
      enabled: boolean;
      next_run_at: NullableTimestamp;
      last_run_at: NullableTimestamp;
      last_status: RunStatus | null;
      created_by: string;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    schedule_runs: {
      id: string;
      schedule_id: string;
      tenant_id: string;
      workspace_id: string;
      due_at: Timestamp;
      started_at: Timestamp;
      finished_at: NullableTimestamp;
      status: RunStatus;
      job_id: string | null;
      error: string | null;
    };
  }
}

export {};
