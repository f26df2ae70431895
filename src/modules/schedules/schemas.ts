import { Type } from 'typebox';
import { Nullable, Paged, PageQuery, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { RUN_STATUSES, SCHEDULE_KINDS } from './tables.js';
import { MAX_INTERVAL_SECONDS, MIN_INTERVAL_SECONDS } from './timing.js';

const Target = Type.Object(
  {
    job_id: Type.Optional(Type.String({ format: 'uuid', description: 'discovery: the job whose plugins and configuration each run repeats as a new job' })),
    frameworks: Type.Optional(
      Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50, description: 'audit: the frameworks to audit; empty or absent: every framework enabled when the run starts' }),
    ),
  },
  { additionalProperties: false },
);

const timing = {
  cron: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 200,
        description: 'Five fields (minute hour day-of-month month day-of-week) or @hourly/@daily/@weekly/@monthly/@yearly, read in time_zone; runs at least 5 minutes apart',
      }),
    ),
  ),
  interval_seconds: Type.Optional(
    Nullable(Type.Integer({ description: `Seconds between runs, ${MIN_INTERVAL_SECONDS}-${MAX_INTERVAL_SECONDS}; exactly one of cron and interval_seconds` })),
  ),
  time_zone: Type.Optional(Type.String({ maxLength: 64, description: 'IANA time zone the cron expression is read in (default UTC)' })),
};

export const ScheduleCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    kind: StringEnum(SCHEDULE_KINDS),
    target: Target,
    ...timing,
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

export const SchedulePatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    target: Type.Optional(Target),
    ...timing,
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const Schedule = Type.Object({
  id: Uuid,
  name: Type.String(),
  kind: StringEnum(SCHEDULE_KINDS),
  target: Type.Object({ job_id: Type.Optional(Uuid), frameworks: Type.Optional(Type.Array(Type.String())) }),
  cron: Nullable(Type.String()),
  interval_seconds: Nullable(Type.Integer()),
  time_zone: Type.String(),
  enabled: Type.Boolean(),
  next_run_at: Nullable(Timestamp),
  last_run_at: Nullable(Timestamp),
  last_status: Nullable(StringEnum(RUN_STATUSES)),
  created_by: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ScheduleList = Paged(Schedule);

export const ScheduleRun = Type.Object({
  id: Uuid,
  schedule_id: Uuid,
  status: StringEnum(RUN_STATUSES, { description: 'skipped: the previous run was still running when this one was due' }),
  due_at: Timestamp,
  started_at: Timestamp,
  finished_at: Nullable(Timestamp),
  job_id: Nullable(Uuid),
  job_url: Nullable(Type.String({ description: 'the discovery job or audit run the run queued' })),
  error: Nullable(Type.String()),
});

export const ScheduleRunList = Paged(ScheduleRun);

export const ScheduleListQuery = Type.Object({ kind: Type.Optional(StringEnum(SCHEDULE_KINDS)), ...PageQuery });
export const RunListQuery = Type.Object({ ...PageQuery });
export const ScheduleParams = Type.Object({ tenantID: Uuid, scheduleID: Uuid });
