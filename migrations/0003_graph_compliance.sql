-- The infrastructure graph, compliance settings, custom rules, audit runs and findings.

CREATE TABLE nodes (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id text NOT NULL,
  provider text NOT NULL,
  region text NOT NULL,
  type text NOT NULL,
  native_id text NOT NULL,
  name text NOT NULL,
  account_id text,
  properties jsonb NOT NULL DEFAULT '{}'::jsonb,
  tags jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Where the node came from when known (e.g. its Terraform resource block, for patches).
  source jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, id)
);
CREATE INDEX nodes_type_idx ON nodes (workspace_id, type, id);
CREATE INDEX nodes_region_idx ON nodes (workspace_id, region);
CREATE INDEX nodes_tenant_idx ON nodes (tenant_id);

CREATE TABLE edges (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  source text NOT NULL,
  target text NOT NULL,
  type text NOT NULL,
  properties jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (workspace_id, source, target, type),
  -- Deleting a node removes its edges.
  FOREIGN KEY (workspace_id, source) REFERENCES nodes (workspace_id, id) ON DELETE CASCADE,
  FOREIGN KEY (workspace_id, target) REFERENCES nodes (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX edges_target_idx ON edges (workspace_id, target);
CREATE INDEX edges_type_idx ON edges (workspace_id, type);

-- Which frameworks a tenant evaluates (absent row = enabled).
CREATE TABLE compliance_settings (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  framework text NOT NULL,
  enabled boolean NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, framework)
);

CREATE TABLE custom_rules (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL,
  title text NOT NULL,
  description text NOT NULL,
  severity text NOT NULL CHECK (severity IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO')),
  resource_type text NOT NULL,
  framework text NOT NULL,
  control_id text NOT NULL,
  framework_mappings jsonb NOT NULL DEFAULT '[]'::jsonb,
  condition text NOT NULL,
  remediation jsonb NOT NULL,
  created_by uuid,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);

-- One row per audit run; its id is the queue job's id.
CREATE TABLE audit_runs (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  frameworks text[] NOT NULL,
  -- Frameworks asked for while this run was already running: a follow-up run covers them.
  pending_frameworks text[] NOT NULL DEFAULT '{}',
  trigger text NOT NULL,
  requested_by text,
  stats jsonb NOT NULL DEFAULT '{}'::jsonb,
  error text,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz
);
CREATE INDEX audit_runs_workspace_idx ON audit_runs (workspace_id, created_at DESC);

CREATE TABLE findings (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- <rule_id>:<resource_id>
  id text NOT NULL,
  rule_id text NOT NULL,
  framework text NOT NULL,
  control_id text NOT NULL,
  framework_mappings jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- The rule's severity; severity is what applies now (CRITICAL when a referenced CVE is known-exploited).
  base_severity text NOT NULL,
  severity text NOT NULL CHECK (severity IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO')),
  -- For sorting by severity with an index.
  severity_rank smallint GENERATED ALWAYS AS (
    CASE severity WHEN 'CRITICAL' THEN 5 WHEN 'HIGH' THEN 4 WHEN 'MEDIUM' THEN 3 WHEN 'LOW' THEN 2 ELSE 1 END
  ) STORED,
  status text NOT NULL CHECK (status IN ('open', 'resolved')),
  title text NOT NULL,
  description text NOT NULL,
  remediation text NOT NULL,
  resource_id text NOT NULL,
  resource_type text NOT NULL,
  resource_name text NOT NULL,
  region text NOT NULL,
  account_id text NOT NULL DEFAULT '',
  cve_ids text[] NOT NULL DEFAULT '{}',
  tags text[] NOT NULL DEFAULT '{}',
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Root-cause group (see the grouped findings endpoint).
  group_id text NOT NULL,
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  resolved_at timestamptz,
  resolved_by text,
  PRIMARY KEY (workspace_id, id)
)
-- Every audit moves last_seen of every open finding: free space in each page lets those updates
-- be HOT (no index maintenance, last_seen is in no index).
WITH (fillfactor = 70);
CREATE INDEX findings_list_idx ON findings (workspace_id, status, severity_rank DESC, created_at DESC, id);
CREATE INDEX findings_created_idx ON findings (workspace_id, status, created_at DESC, id);
CREATE INDEX findings_rule_idx ON findings (workspace_id, rule_id, resource_id);
CREATE INDEX findings_resource_idx ON findings (workspace_id, resource_id);
CREATE INDEX findings_group_idx ON findings (workspace_id, group_id);
CREATE INDEX findings_cve_idx ON findings USING gin (cve_ids);

-- Attestation state of controls that questionnaires cover (written by the questionnaire module,
-- read by the compliance scores): not_assessed, questionnaire_assigned, in_progress, submitted,
-- changes_requested, attested (until expires_at).
CREATE TABLE control_attestations (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  framework text NOT NULL,
  control_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('not_assessed', 'questionnaire_assigned', 'in_progress', 'submitted', 'changes_requested', 'attested')),
  assessment_id uuid,
  attested_at timestamptz,
  expires_at timestamptz,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, framework, control_id)
);
