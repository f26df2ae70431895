-- Finding SLAs (issue 23 item 5): every open finding is due a number of hours after it was opened,
-- by its severity; a tenant may override the hours per severity (PUT /settings/compliance {sla}).
--
-- finding_sla_settings  the tenant's overrides only; a severity without a row takes the default
--                       (finding_sla_hours below: the interface's response times).
-- opened_at             when the finding was last opened: created, or reopened (resolved -> open).
--                       The SLA window counts from it, also when the severity changes later.
-- due_at                (migration 0027) opened_at + the window of its severity; NULL when the
--                       finding is not open or its severity has no SLA (INFO by default).
-- sla_breached_at       when the sweeper emitted finding.sla_breached for the current due_at, so it
--                       is emitted once per breach; cleared when the finding is resolved or reopened,
--                       or when a new due_at lies after it (the breach no longer stands).
CREATE TABLE finding_sla_settings (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  severity text NOT NULL CHECK (severity IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO')),
  hours integer NOT NULL CHECK (hours BETWEEN 1 AND 87600),
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, severity)
);

ALTER TABLE finding_rows
  ADD COLUMN opened_at timestamptz,
  ADD COLUMN sla_breached_at timestamptz;

-- The SLA window of a severity for a tenant, in hours; NULL: none. Keep the defaults in step with
-- SLA_DEFAULT_HOURS (src/modules/compliance/sla/sla-settings.ts).
CREATE FUNCTION finding_sla_hours(tenant uuid, sev text) RETURNS integer LANGUAGE sql STABLE AS $$
  SELECT coalesce(
    (SELECT s.hours FROM finding_sla_settings s WHERE s.tenant_id = tenant AND s.severity = sev),
    CASE sev WHEN 'CRITICAL' THEN 24 WHEN 'HIGH' THEN 48 WHEN 'MEDIUM' THEN 336 WHEN 'LOW' THEN 2160 END
  )
$$;

-- Open findings written before this migration: their window counts from their creation (when a
-- finding was last reopened was not recorded).
UPDATE finding_rows
SET opened_at = created_at,
    due_at = created_at + make_interval(hours => finding_sla_hours(tenant_id, severity))
WHERE status = 'open';

-- Sets opened_at, due_at and sla_breached_at of a row being written. The database's clock is never
-- read: a reopened finding's window starts at the updated_at its writer stamped (every reopen path
-- sets it from the application clock, which tests move).
CREATE FUNCTION finding_rows_sla() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status <> 'open' THEN
    NEW.due_at := NULL;
    NEW.sla_breached_at := NULL;
    RETURN NEW;
  END IF;
  IF TG_OP = 'INSERT' THEN
    NEW.opened_at := coalesce(NEW.opened_at, NEW.created_at);
  ELSIF OLD.status <> 'open' THEN
    NEW.opened_at := NEW.updated_at;
    NEW.sla_breached_at := NULL;
  ELSIF NEW.opened_at IS NULL THEN
    NEW.opened_at := NEW.created_at;
  END IF;
  NEW.due_at := NEW.opened_at + make_interval(hours => finding_sla_hours(NEW.tenant_id, NEW.severity));
  IF NEW.sla_breached_at IS NOT NULL AND (NEW.due_at IS NULL OR NEW.due_at > NEW.sla_breached_at) THEN
    NEW.sla_breached_at := NULL;
  END IF;
  RETURN NEW;
END $$;

-- Every writer is covered by these two row triggers, and the bulk writer pays (almost) nothing for
-- them: the audit's insert (insert-findings.ts, ~100,000 rows in a first audit) computes opened_at
-- and due_at itself, looking the tenant's hours up once per rule rather than once per row, and the
-- WHEN clause (evaluated without entering PL/pgSQL) skips the trigger for rows that carry opened_at.
-- Other inserts (agent findings, a few per host) take the trigger. An AFTER statement trigger with a
-- transition table would have written every inserted row a second time. Updates enter the function
-- only when the severity or the status actually changes (a KEV escalation, a rule's new severity,
-- resolve, reopen), not for the last_seen stamps every audit writes.
CREATE TRIGGER finding_rows_sla_insert
BEFORE INSERT ON finding_rows
FOR EACH ROW WHEN (NEW.opened_at IS NULL)
EXECUTE FUNCTION finding_rows_sla();

CREATE TRIGGER finding_rows_sla_update
BEFORE UPDATE OF severity, status ON finding_rows
FOR EACH ROW WHEN (OLD.severity IS DISTINCT FROM NEW.severity OR OLD.status IS DISTINCT FROM NEW.status)
EXECUTE FUNCTION finding_rows_sla();

-- GET /findings?sla=overdue|due_soon and the counts of /controls/status: a range of due_at within a
-- workspace's open findings.
CREATE INDEX finding_rows_due_idx ON finding_rows (workspace_id, due_at) WHERE status = 'open' AND due_at IS NOT NULL;
-- The breach sweeper, across workspaces: the open findings not yet reported, by due time. Rows leave
-- the index once reported, so it stays the size of what is still to come.
CREATE INDEX finding_rows_sla_pending_idx ON finding_rows (due_at) WHERE status = 'open' AND due_at IS NOT NULL AND sla_breached_at IS NULL;
