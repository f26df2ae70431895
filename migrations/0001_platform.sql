-- Platform tables: settings, the job queue and its schedules, the event outbox.

CREATE TABLE system_settings (
  key text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE jobs (
  id uuid PRIMARY KEY,
  kind text NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}'::jsonb,
  tenant_id uuid,
  workspace_id uuid,
  status text NOT NULL DEFAULT 'queued'
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  run_at timestamptz NOT NULL,
  lease_token uuid,
  lease_owner text,
  lease_expires_at timestamptz,
  dedupe_key text,
  last_error text,
  result jsonb,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz
);
-- The claim query walks these two partial indexes only.
CREATE INDEX jobs_ready_idx ON jobs (run_at) WHERE status = 'queued';
CREATE INDEX jobs_leased_idx ON jobs (lease_expires_at) WHERE status = 'running';
CREATE INDEX jobs_tenant_idx ON jobs (tenant_id, kind, created_at);
-- At most one live job per (kind, dedupe key).
CREATE UNIQUE INDEX jobs_dedupe_idx ON jobs (kind, dedupe_key)
  WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running');

CREATE TABLE job_schedules (
  name text PRIMARY KEY,
  kind text NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}'::jsonb,
  interval_ms bigint NOT NULL CHECK (interval_ms > 0),
  next_run_at timestamptz NOT NULL,
  last_run_at timestamptz
);

-- Every domain event is written here in the same transaction as the change that caused it;
-- the dispatcher, the SSE hub and webhook deliveries read from it. seq gives a global order.
CREATE TABLE outbox_events (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  tenant_id uuid NOT NULL,
  workspace_id uuid,
  type text NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX outbox_events_tenant_idx ON outbox_events (tenant_id, seq);
