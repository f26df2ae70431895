-- Outside respondents (issue 25): a link that lets someone without an account answer one assessment.
-- Only the SHA-256 of the link's token is kept; the token itself is mailed or shown once.
CREATE TABLE assessment_links (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  assessment_id uuid NOT NULL REFERENCES assessments (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  name text NOT NULL,
  recipient_email text,
  delivery text NOT NULL CHECK (delivery IN ('email', 'copy')),
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_by_name text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  revoked_by_name text,
  last_used_at timestamptz,
  use_count integer NOT NULL DEFAULT 0
);
CREATE INDEX assessment_links_assessment ON assessment_links (assessment_id, created_at DESC);

-- What an outside respondent does is audited under the link that did it.
ALTER TABLE audit_logs DROP CONSTRAINT audit_logs_actor_type_check;
ALTER TABLE audit_logs ADD CONSTRAINT audit_logs_actor_type_check CHECK (actor_type IN ('user', 'api_key', 'system', 'respondent_link'));
