-- Workspace schedules (issue 27 item 4): discovery jobs and audits run on a cron expression or a fixed
-- interval in the schedule's time zone. One recurring queue job (schedules.dispatch) claims due rows
-- with FOR UPDATE SKIP LOCKED, so a schedule fires once however many scheduler processes run.
CREATE TABLE schedules (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('discovery', 'audit')),
  -- discovery: {job_id} of the job whose plugins and configuration each run repeats; audit: {frameworks}.
  target jsonb NOT NULL,
  cron text,
  interval_seconds integer CHECK (interval_seconds > 0),
  time_zone text NOT NULL,
  enabled boolean NOT NULL,
  next_run_at timestamptz,
  last_run_at timestamptz,
  last_status text,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((cron IS NULL) <> (interval_seconds IS NULL))
);
CREATE INDEX schedules_workspace ON schedules (workspace_id, created_at DESC, id DESC);
-- The dispatcher's scan: enabled schedules by when they are due.
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE enabled;

CREATE TABLE schedule_runs (
  id uuid PRIMARY KEY,
  schedule_id uuid NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- When the run was due, and when the dispatcher queued it (later if no scheduler ran meanwhile).
  due_at timestamptz NOT NULL,
  started_at timestamptz NOT NULL,
  finished_at timestamptz,
  status text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled', 'skipped')),
  -- The discovery job or audit run it queued (also the job queue's id).
  job_id uuid,
  error text
);
CREATE INDEX schedule_runs_schedule ON schedule_runs (schedule_id, started_at DESC, id DESC);
-- The dispatcher completes runs whose job has finished, and drops finished runs past their retention.
CREATE INDEX schedule_runs_running ON schedule_runs (started_at) WHERE status = 'running';
CREATE INDEX schedule_runs_finished ON schedule_runs (finished_at) WHERE finished_at IS NOT NULL;
