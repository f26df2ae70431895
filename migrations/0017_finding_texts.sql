-- A finding's text (title, description, remediation and framework mappings: about 800 bytes) is its
-- rule's, the same for every finding of the rule; each finding row carried a copy of it, two thirds
-- of the row. Storing those copies was most of what a first audit costs (117,094 findings of 100,000
-- nodes: 3.9 s to store the rows with their copies, 2.3 s without). The text now lives once per
-- workspace in finding_texts, keyed by a digest of its content, and the row refers to it.
--
-- `findings` becomes a view that joins the two, with the columns the table had, so every reader is
-- unchanged. Writers write finding_rows (and finding_texts first for a text that is new).
--
-- Text rows are never updated: a changed text is another row. Nothing deletes a text that no finding
-- refers to any more (a rule whose text changed, an agent finding's description that moved); they
-- are few, and go with their workspace.
CREATE TABLE finding_texts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- A digest of the content (see finding-texts.ts): equal ids mean equal text. The backfill below
  -- digests differently from the application, so one text may have two rows: harmless.
  id text NOT NULL,
  title text NOT NULL,
  description text NOT NULL,
  remediation text NOT NULL,
  framework_mappings jsonb NOT NULL,
  PRIMARY KEY (workspace_id, id)
);

ALTER TABLE findings RENAME TO finding_rows;
ALTER TABLE finding_rows ADD COLUMN text_id text;

INSERT INTO finding_texts (tenant_id, workspace_id, id, title, description, remediation, framework_mappings)
SELECT DISTINCT ON (workspace_id, digest) tenant_id, workspace_id, digest, title, description, remediation, framework_mappings
FROM (
  SELECT tenant_id, workspace_id, title, description, remediation, framework_mappings,
    'm' || md5(title || E'\x1f' || description || E'\x1f' || remediation || E'\x1f' || framework_mappings::text) AS digest
  FROM finding_rows
) AS t
ORDER BY workspace_id, digest;

UPDATE finding_rows
SET text_id = 'm' || md5(title || E'\x1f' || description || E'\x1f' || remediation || E'\x1f' || framework_mappings::text);

ALTER TABLE finding_rows
  ALTER COLUMN text_id SET NOT NULL,
  DROP COLUMN title,
  DROP COLUMN description,
  DROP COLUMN remediation,
  DROP COLUMN framework_mappings;

-- A LEFT JOIN on the texts' primary key: a query that reads no text column (counts, scores) does not
-- join at all (the planner removes the join), one that pages reads the texts of its page only.
-- Every row has its text, so the join never yields NULLs.
CREATE VIEW findings AS
SELECT r.tenant_id, r.workspace_id, r.id, r.rule_id, r.framework, r.control_id, t.framework_mappings, r.base_severity,
  r.severity, r.severity_rank, r.status, t.title, t.description, t.remediation, r.resource_id, r.resource_type,
  r.resource_name, r.region, r.account_id, r.cve_ids, r.tags, r.details, r.group_id, r.first_seen, r.last_seen,
  r.created_at, r.updated_at, r.resolved_at, r.resolved_by, r.group_cause, r.text_id
FROM finding_rows r
LEFT JOIN finding_texts t ON t.workspace_id = r.workspace_id AND t.id = r.text_id;
