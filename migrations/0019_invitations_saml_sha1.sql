-- Invitations into a tenant: a tenant admin adding an existing user asks for that user's consent
-- instead of linking the user at once.

CREATE TABLE membership_invitations (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  -- As the inviter typed it (lower-case): answered and listed the same whether or not it names a user.
  username text NOT NULL,
  -- The user who had the name when invited; NULL when nobody had it: nobody can accept, it expires.
  user_id uuid REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('read-only', 'auditor', 'security-analyst', 'tenant-admin', 'system-admin')),
  invited_by_type text NOT NULL CHECK (invited_by_type IN ('user', 'api_key')),
  invited_by_id uuid,
  invited_by_name text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'revoked')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  responded_at timestamptz
);
-- One open invitation per name and tenant: inviting again renews it.
CREATE UNIQUE INDEX membership_invitations_open_idx ON membership_invitations (tenant_id, username) WHERE status = 'pending';
CREATE INDEX membership_invitations_tenant_idx ON membership_invitations (tenant_id, created_at);
CREATE INDEX membership_invitations_user_idx ON membership_invitations (user_id, created_at) WHERE status = 'pending';

-- SAML: SHA-1 signatures and digests are refused unless the tenant allows its legacy IdP explicitly.
ALTER TABLE sso_configs ADD COLUMN allow_sha1 boolean NOT NULL DEFAULT false;
