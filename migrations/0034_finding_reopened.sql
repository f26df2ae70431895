-- A finding's reopenings (issue 24): the console's finding history shows when a resolved finding
-- was found again, which resolved_at (cleared on reopening) and updated_at (moved by any change)
-- cannot tell.
--
-- reopened_at    when the finding last went from resolved back to open; NULL: never. Kept when it is
--                resolved again, so the history still shows it.
-- reopen_count   how many times that happened.
--
-- Written by the two writers that reopen a finding, in the statement that reopens it (the audit's
-- reconcile.ts and the agent's findings-sync.ts), from the application clock like updated_at.
-- NOT NULL DEFAULT 0 is a catalogue change on PostgreSQL 11 and later: no table rewrite.
ALTER TABLE finding_rows
  ADD COLUMN reopened_at timestamptz,
  ADD COLUMN reopen_count integer NOT NULL DEFAULT 0;

-- What is known of earlier reopenings: findings open again since migration 0028 have their last
-- reopening in finding_reopenings (which drops it when they are resolved again). How many times they
-- were reopened before was not recorded: at least once.
UPDATE finding_rows r
SET reopened_at = fr.reopened_at, reopen_count = 1
FROM finding_reopenings fr
WHERE r.workspace_id = fr.workspace_id AND r.id = fr.finding_id;

CREATE OR REPLACE VIEW findings AS
SELECT r.tenant_id, r.workspace_id, r.id, r.rule_id, r.framework, r.control_id, t.framework_mappings, r.base_severity,
  r.severity, r.severity_rank, r.status, t.title, t.description, t.remediation, r.resource_id, r.resource_type,
  r.resource_name, r.region, r.account_id, r.cve_ids, r.tags, r.details, r.group_id, r.first_seen, r.last_seen,
  r.created_at, r.updated_at, r.resolved_at, r.resolved_by, r.group_cause, r.text_id,
  r.accepted_until, r.due_at, r.risk_score, r.reopened_at, r.reopen_count
FROM finding_rows r
LEFT JOIN finding_texts t ON t.workspace_id = r.workspace_id AND t.id = r.text_id;
