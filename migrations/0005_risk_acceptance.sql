-- Risk acceptance of single findings and of root-cause groups.

CREATE TABLE risk_acceptances (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  scope text NOT NULL CHECK (scope IN ('finding', 'group')),
  finding_id text,
  group_id text,
  group_label text,
  owner text NOT NULL,
  reason text NOT NULL,
  expires_at timestamptz NOT NULL,
  -- finding_ids, resource_ids and controls covered when accepted.
  snapshot jsonb NOT NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  revoked_by text,
  -- Set by the sweeper once it has recorded the expiry (events, audit log); the state itself is
  -- computed from expires_at at read time, so expiry applies at the exact moment.
  expiry_recorded_at timestamptz,
  CHECK ((scope = 'finding') = (finding_id IS NOT NULL)),
  CHECK (group_id IS NOT NULL)
);
-- At most one unrevoked acceptance per finding and per group (an expired one must be revoked or
-- replaced: see the service).
CREATE INDEX risk_acceptances_workspace_idx ON risk_acceptances (workspace_id, created_at DESC);
CREATE INDEX risk_acceptances_finding_idx ON risk_acceptances (workspace_id, finding_id) WHERE scope = 'finding';
CREATE INDEX risk_acceptances_group_idx ON risk_acceptances (workspace_id, group_id) WHERE scope = 'group';
CREATE INDEX risk_acceptances_expiry_idx ON risk_acceptances (expires_at) WHERE revoked_at IS NULL AND expiry_recorded_at IS NULL;

-- The findings an acceptance covers (its snapshot), for set-based "is this finding accepted" checks.
CREATE TABLE risk_acceptance_findings (
  acceptance_id uuid NOT NULL REFERENCES risk_acceptances (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  finding_id text NOT NULL,
  PRIMARY KEY (acceptance_id, finding_id)
);
CREATE INDEX risk_acceptance_findings_finding_idx ON risk_acceptance_findings (workspace_id, finding_id);
