-- Scanner imports (issue 27): findings of other tools (Prowler, Security Hub, SARIF scanners) as
-- first-class findings, and the imports that bring them.
--
-- source             who found it: 'controlgraph' for our rules and agents, else the tool
--                    ('prowler', 'securityhub', a SARIF tool's name). NOT NULL DEFAULT is a catalogue
--                    change on PostgreSQL 11 and later: no table rewrite.
-- source_check_id    the tool's check id (rule_id is '<source>:<check id>').
-- source_finding_id  the tool's own id of the finding, to find it in the tool.
-- location           where in a file an IaC or code finding is ({uri, start_line, end_line}).
ALTER TABLE finding_rows
  ADD COLUMN source text NOT NULL DEFAULT 'controlgraph',
  ADD COLUMN source_check_id text,
  ADD COLUMN source_finding_id text,
  ADD COLUMN location jsonb;

-- A re-import resolves the open findings of its scope (source, account, region, check set) it no
-- longer reports: this finds them without reading the workspace's other findings.
CREATE INDEX finding_rows_import_scope ON finding_rows (workspace_id, source, account_id, region, source_check_id)
  WHERE status = 'open' AND source <> 'controlgraph';

CREATE OR REPLACE VIEW findings AS
SELECT r.tenant_id, r.workspace_id, r.id, r.rule_id, r.framework, r.control_id, t.framework_mappings, r.base_severity,
  r.severity, r.severity_rank, r.status, t.title, t.description, t.remediation, r.resource_id, r.resource_type,
  r.resource_name, r.region, r.account_id, r.cve_ids, r.tags, r.details, r.group_id, r.first_seen, r.last_seen,
  r.created_at, r.updated_at, r.resolved_at, r.resolved_by, r.group_cause, r.text_id,
  r.accepted_until, r.due_at, r.risk_score, r.reopened_at, r.reopen_count,
  r.source, r.source_check_id, r.source_finding_id, r.location
FROM finding_rows r
LEFT JOIN finding_texts t ON t.workspace_id = r.workspace_id AND t.id = r.text_id;

-- One uploaded file: validated on upload, stored in the artifact store (artifact_key), applied by a
-- queued job that keeps the counts current as it goes.
CREATE TABLE imports (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  format text NOT NULL,
  -- The tool the findings are from, once the first record said it ('' until then).
  source text NOT NULL DEFAULT '',
  status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  file_name text NOT NULL,
  -- Bytes as uploaded (gzip included) and as stored (unpacked).
  size_bytes bigint NOT NULL,
  artifact_key text,
  records integer NOT NULL DEFAULT 0,
  findings_created integer NOT NULL DEFAULT 0,
  findings_updated integer NOT NULL DEFAULT 0,
  findings_resolved integer NOT NULL DEFAULT 0,
  findings_reopened integer NOT NULL DEFAULT 0,
  nodes integer NOT NULL DEFAULT 0,
  errors_count integer NOT NULL DEFAULT 0,
  -- The first 1,000 record errors ({record, message}); errors_count has them all.
  errors jsonb NOT NULL DEFAULT '[]'::jsonb,
  error text,
  created_by text,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz
);
CREATE INDEX imports_workspace ON imports (workspace_id, created_at DESC, id);

-- An imported finding is attached to the node its resource names: found by ARN or native id.
CREATE INDEX nodes_arn ON nodes (workspace_id, (properties->>'arn'));
CREATE INDEX nodes_native_id ON nodes (workspace_id, native_id);
