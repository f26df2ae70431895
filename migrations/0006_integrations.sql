-- Event delivery: integrations (webhooks, e-mail, chat, tickets, incidents), their deliveries and
-- every attempt, and the dispatcher's position in the outbox.

CREATE TABLE integrations (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('webhook', 'email', 'slack', 'teams', 'jira', 'github', 'pagerduty')),
  name text NOT NULL,
  -- 'alert_rule' when created through /alerts/rules (a simpler body over the same integration).
  source text NOT NULL DEFAULT 'integration' CHECK (source IN ('integration', 'alert_rule')),
  status text NOT NULL CHECK (status IN ('active', 'disabled')),
  -- The configuration without its secret fields; the event types are a column for the dispatcher.
  config jsonb NOT NULL,
  events text[] NOT NULL,
  -- AES-256-GCM sealed JSON of the secret fields (signing secret, tokens, secret URLs, headers).
  secrets text NOT NULL,
  -- When the integration was created or last re-enabled: the auto-disable failure rate counts the
  -- deliveries finished since then.
  enabled_at timestamptz NOT NULL,
  disabled_at timestamptz,
  disabled_reason text,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX integrations_tenant_idx ON integrations (tenant_id, created_at, id);
CREATE INDEX integrations_active_idx ON integrations (tenant_id) WHERE status = 'active';

-- One delivery per (integration, event): the unique key makes dispatching idempotent.
CREATE TABLE integration_deliveries (
  id uuid PRIMARY KEY,
  integration_id uuid NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid REFERENCES workspaces (id) ON DELETE CASCADE,
  event_id uuid NOT NULL,
  event_seq bigint NOT NULL,
  event_type text NOT NULL,
  -- The envelope exactly as sent (the signed body of webhooks), kept as text so bytes never change.
  envelope text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  -- Attempts made in all, and in the current round (a redelivery starts a new round).
  attempts integer NOT NULL DEFAULT 0,
  round_attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  -- The queue job of the next attempt; a job that is not this one is stale and does nothing.
  job_id uuid,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  completed_at timestamptz,
  UNIQUE (integration_id, event_id)
);
CREATE INDEX integration_deliveries_list_idx ON integration_deliveries (integration_id, created_at DESC, id DESC);
CREATE INDEX integration_deliveries_done_idx ON integration_deliveries (integration_id, completed_at DESC) WHERE completed_at IS NOT NULL;
CREATE INDEX integration_deliveries_retention_idx ON integration_deliveries (completed_at) WHERE completed_at IS NOT NULL;

CREATE TABLE integration_delivery_attempts (
  delivery_id uuid NOT NULL REFERENCES integration_deliveries (id) ON DELETE CASCADE,
  number integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
  status_code integer,
  latency_ms integer,
  -- The first bytes of the response (or the SMTP server's reply), never the request.
  response_body text,
  error text,
  -- When the next attempt is due (null when this was the last one of its round or it succeeded).
  next_attempt_at timestamptz,
  PRIMARY KEY (delivery_id, number)
);

-- The dispatcher's position in outbox_events (one row, locked FOR UPDATE while dispatching, so any
-- number of workers dispatch each event once) and the seqs it skipped that may still commit.
CREATE TABLE integration_dispatch_state (
  id integer PRIMARY KEY CHECK (id = 1),
  cursor bigint NOT NULL,
  gaps jsonb NOT NULL DEFAULT '[]'::jsonb,
  updated_at timestamptz NOT NULL
);
INSERT INTO integration_dispatch_state (id, cursor, gaps, updated_at)
VALUES (1, (SELECT coalesce(max(seq), 0) FROM outbox_events), '[]'::jsonb, now());

-- Wakes the dispatcher in the transaction that writes events: when those events commit, a due
-- dispatch job exists (run_at is the events' own time, so an injected clock sees it due). Only for
-- tenants with an active integration, and only when no due dispatch job is queued already (a reader
-- never blocks a writer, so concurrent writers may add one each: the dispatcher serialises them).
-- The shared advisory lock (held to commit) lets the dispatcher see that event writers are still in
-- flight, whose events its read may miss: it then queues a follow-up run (see dispatcher.ts).
CREATE INDEX jobs_integrations_dispatch_idx ON jobs (run_at) WHERE status = 'queued' AND kind = 'integrations.dispatch';

CREATE FUNCTION integrations_wake_dispatcher() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  due timestamptz;
BEGIN
  SELECT min(n.created_at) INTO due FROM new_events n
  WHERE EXISTS (SELECT 1 FROM integrations i WHERE i.tenant_id = n.tenant_id AND i.status = 'active');
  IF due IS NULL THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock_shared(727007);
  IF NOT EXISTS (SELECT 1 FROM jobs WHERE kind = 'integrations.dispatch' AND status = 'queued' AND run_at <= due) THEN
    INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, created_at)
    VALUES (gen_random_uuid(), 'integrations.dispatch', '{}'::jsonb, 'queued', 0, 3, due, due);
    PERFORM pg_notify('cg_jobs', 'integrations.dispatch');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER outbox_events_wake_integrations
AFTER INSERT ON outbox_events
REFERENCING NEW TABLE AS new_events
FOR EACH STATEMENT EXECUTE FUNCTION integrations_wake_dispatcher();
