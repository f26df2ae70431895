-- Findings lists that scale (issue 23 item 2): every filter, sort and search of GET /findings and the
-- order of GET /findings/scored is served by an index. What each one uses (EXPLAIN on PostgreSQL 15
-- with 117,094 findings in one workspace):
--
--   status, severity, sort=severity   findings_list_idx (0003): (workspace_id, status, severity_rank DESC, created_at DESC, id)
--   sort=created_at                   findings_created_idx (0003)
--   sort=resource_id, resource_id     findings_resource_idx (0003): few findings per resource, so the
--                                     tie on resource_id is sorted incrementally
--   rule_id, group_id                 findings_rule_idx, findings_group_idx (0003)
--   status=accepted                   finding_rows_accepted_idx (0027)
--   sort=first_seen                   finding_rows_first_seen_idx (below)
--   resource_type                     finding_rows_type_idx (below)
--   framework, control_id             finding_rows_control_idx (the finding's own control) and
--                                     finding_rows_text_idx (its mapped controls, through the texts)
--   search                            finding_rows_text_idx (titles and descriptions, matched in the
--                                     workspace's few texts) OR finding_rows_resource_trgm_idx (the
--                                     resource id, a trigram index: ILIKE '%term%' without a scan)
--   /findings/scored, min_score       finding_rows_risk_idx (below)
--
-- sort=last_seen has no index on purpose: every audit stamps last_seen on every finding it sees, and
-- those updates are HOT (no index touched, fillfactor 70) only while no index holds last_seen.
-- Indexing it would make each re-audit write an entry in every index of every open finding.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX finding_rows_resource_trgm_idx ON finding_rows USING gin (resource_id gin_trgm_ops);
CREATE INDEX finding_rows_text_idx ON finding_rows (workspace_id, text_id);
CREATE INDEX finding_rows_type_idx ON finding_rows (workspace_id, resource_type, status);
CREATE INDEX finding_rows_control_idx ON finding_rows (workspace_id, control_id, framework);
CREATE INDEX finding_rows_first_seen_idx ON finding_rows (workspace_id, status, first_seen DESC, id);

-- The stored risk score (risk-score.ts; kept by rescoreFindings in rescore.ts wherever an input changes).
-- Written here from the severity alone: the next audit of each workspace adds KEV, EPSS, exposure and
-- criticality. The trigger below keeps the severity's share right the moment the severity is written
-- (an insert by any writer, a KEV escalation, a rule's new severity), so no finding is ever unscored
-- and a severity change moves the order in its own transaction; rescoreFindings then makes it exact.
CREATE FUNCTION finding_severity_points(sev text) RETURNS smallint LANGUAGE sql IMMUTABLE AS $$
  SELECT (CASE sev WHEN 'CRITICAL' THEN 60 WHEN 'HIGH' THEN 45 WHEN 'MEDIUM' THEN 30 WHEN 'LOW' THEN 15 ELSE 5 END)::smallint
$$;

UPDATE finding_rows SET risk_score = finding_severity_points(severity) WHERE risk_score IS NULL;

-- On insert without a score: the severity's points. On a severity change: the other factors' points
-- (score minus the old severity's points) on top of the new severity's, capped at 100.
CREATE FUNCTION finding_rows_risk_severity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.risk_score := finding_severity_points(NEW.severity);
  ELSE
    NEW.risk_score := least(100, finding_severity_points(NEW.severity)
      + greatest(0, coalesce(OLD.risk_score, 0) - finding_severity_points(OLD.severity)));
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER finding_rows_risk_insert
BEFORE INSERT ON finding_rows
FOR EACH ROW WHEN (NEW.risk_score IS NULL)
EXECUTE FUNCTION finding_rows_risk_severity();
CREATE TRIGGER finding_rows_risk_update
BEFORE UPDATE OF severity ON finding_rows
FOR EACH ROW WHEN (OLD.severity IS DISTINCT FROM NEW.severity AND OLD.risk_score IS NOT DISTINCT FROM NEW.risk_score)
EXECUTE FUNCTION finding_rows_risk_severity();

CREATE INDEX finding_rows_risk_idx ON finding_rows (workspace_id, status, risk_score DESC, created_at DESC, id);
