-- Cloud account connections: the credentials a workspace's discovery jobs read its cloud with, so the
-- service never reads a tenant's sources with its own credentials unless the operator granted that.
--
-- assume_role: the tenant's IAM role, assumed with STS AssumeRole and the external id the service
-- generated for this connection (the tenant puts it in the role's trust policy). Neither is secret.
-- access_key: the tenant's access key pair, AES-256-GCM sealed (never returned); the last four
-- characters of the key id are kept in the clear so the tenant can tell which key it is.
CREATE TABLE cloud_connections (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  provider text NOT NULL CHECK (provider IN ('aws')),
  auth text NOT NULL CHECK (auth IN ('assume_role', 'access_key')),
  role_arn text,
  external_id text UNIQUE,
  secrets text,
  access_key_hint text,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK (
    (auth = 'assume_role' AND role_arn IS NOT NULL AND external_id IS NOT NULL AND secrets IS NULL)
    OR (auth = 'access_key' AND secrets IS NOT NULL AND access_key_hint IS NOT NULL AND role_arn IS NULL AND external_id IS NULL)
  )
);
CREATE INDEX cloud_connections_scope_idx ON cloud_connections (tenant_id, workspace_id, created_at, id);
