-- Columns of a finding that its readers used to compute from other tables on every request (issue 23):
--
-- accepted_until  the latest expiry among the unrevoked acceptances covering the finding whose expiry
--                 has not been recorded by the sweeper; NULL when none. A finding is active (counts,
--                 scores, alerts) when it is open and accepted_until is NULL or has passed: the
--                 acceptance still stops applying at the exact moment it expires, before the sweeper
--                 records it (which clears the column). Kept by the triggers below, whatever writes
--                 the acceptances.
-- due_at          when an open finding breaches its SLA (issue 23 item 5); NULL for none.
-- risk_score      the stored 0-100 risk score (issue 23 items 1, 2; see risk-score.ts); NULL until scored.
ALTER TABLE finding_rows
  ADD COLUMN accepted_until timestamptz,
  ADD COLUMN due_at timestamptz,
  ADD COLUMN risk_score smallint;

UPDATE finding_rows r
SET accepted_until = a.until
FROM (
  SELECT raf.workspace_id, raf.finding_id, max(ra.expires_at) AS until
  FROM risk_acceptance_findings raf
  JOIN risk_acceptances ra ON ra.id = raf.acceptance_id
  WHERE ra.revoked_at IS NULL AND ra.expiry_recorded_at IS NULL
  GROUP BY raf.workspace_id, raf.finding_id
) a
WHERE r.workspace_id = a.workspace_id AND r.id = a.finding_id;

-- Few findings are accepted at any time: a partial index finds them (and those whose acceptance passed).
CREATE INDEX finding_rows_accepted_idx ON finding_rows (workspace_id, accepted_until) WHERE accepted_until IS NOT NULL;

CREATE OR REPLACE VIEW findings AS
SELECT r.tenant_id, r.workspace_id, r.id, r.rule_id, r.framework, r.control_id, t.framework_mappings, r.base_severity,
  r.severity, r.severity_rank, r.status, t.title, t.description, t.remediation, r.resource_id, r.resource_type,
  r.resource_name, r.region, r.account_id, r.cve_ids, r.tags, r.details, r.group_id, r.first_seen, r.last_seen,
  r.created_at, r.updated_at, r.resolved_at, r.resolved_by, r.group_cause, r.text_id,
  r.accepted_until, r.due_at, r.risk_score
FROM finding_rows r
LEFT JOIN finding_texts t ON t.workspace_id = r.workspace_id AND t.id = r.text_id;

-- Recomputes accepted_until for the given findings of a workspace.
CREATE FUNCTION finding_acceptance_refresh(ws uuid, ids text[]) RETURNS void LANGUAGE sql AS $$
  UPDATE finding_rows r
  SET accepted_until = (
    SELECT max(ra.expires_at)
    FROM risk_acceptance_findings raf
    JOIN risk_acceptances ra ON ra.id = raf.acceptance_id
    WHERE raf.workspace_id = r.workspace_id AND raf.finding_id = r.id
      AND ra.revoked_at IS NULL AND ra.expiry_recorded_at IS NULL
  )
  WHERE r.workspace_id = ws AND r.id = ANY (ids)
$$;

-- An acceptance's findings are written after the acceptance (and deleted with it).
CREATE FUNCTION risk_acceptance_findings_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM finding_acceptance_refresh(OLD.workspace_id, ARRAY[OLD.finding_id]);
    RETURN OLD;
  END IF;
  PERFORM finding_acceptance_refresh(NEW.workspace_id, ARRAY[NEW.finding_id]);
  RETURN NEW;
END $$;
CREATE TRIGGER risk_acceptance_findings_read_columns
AFTER INSERT OR DELETE ON risk_acceptance_findings
FOR EACH ROW EXECUTE FUNCTION risk_acceptance_findings_changed();

-- Revoking, recording the expiry, or changing the expiry of an acceptance moves its findings.
CREATE FUNCTION risk_acceptances_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.revoked_at IS DISTINCT FROM OLD.revoked_at OR NEW.expiry_recorded_at IS DISTINCT FROM OLD.expiry_recorded_at
     OR NEW.expires_at IS DISTINCT FROM OLD.expires_at THEN
    PERFORM finding_acceptance_refresh(NEW.workspace_id,
      ARRAY(SELECT raf.finding_id FROM risk_acceptance_findings raf WHERE raf.acceptance_id = NEW.id));
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER risk_acceptances_read_columns
AFTER UPDATE ON risk_acceptances
FOR EACH ROW EXECUTE FUNCTION risk_acceptances_changed();

-- A finding written again under an id an acceptance already covers (a group acceptance's snapshot, a
-- finding deleted with its resource and found again) takes the acceptance's state. A statement-level
-- trigger: one join of the inserted rows with the (few) covered findings, not a lookup per row.
CREATE FUNCTION finding_rows_inserted_acceptance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE finding_rows r
  SET accepted_until = a.until
  FROM (
    SELECT raf.workspace_id, raf.finding_id, max(ra.expires_at) AS until
    FROM inserted n
    JOIN risk_acceptance_findings raf ON raf.workspace_id = n.workspace_id AND raf.finding_id = n.id
    JOIN risk_acceptances ra ON ra.id = raf.acceptance_id
    WHERE ra.revoked_at IS NULL AND ra.expiry_recorded_at IS NULL
    GROUP BY raf.workspace_id, raf.finding_id
  ) a
  WHERE r.workspace_id = a.workspace_id AND r.id = a.finding_id AND r.accepted_until IS DISTINCT FROM a.until;
  RETURN NULL;
END $$;
CREATE TRIGGER finding_rows_insert_acceptance
AFTER INSERT ON finding_rows
REFERENCING NEW TABLE AS inserted
FOR EACH STATEMENT EXECUTE FUNCTION finding_rows_inserted_acceptance();
