-- Identity and tenancy: accounts, tenants, workspaces, users and memberships, sessions and refresh
-- tokens, API keys, the audit log, rate-limit buckets and login throttling.

CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE tenants (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL,
  slug text NOT NULL UNIQUE,
  plan text NOT NULL CHECK (plan IN ('free', 'pro', 'enterprise')),
  onboarding_completed boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX tenants_account_idx ON tenants (account_id);

CREATE TABLE workspaces (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name text NOT NULL,
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (tenant_id, name)
);
-- Exactly one default workspace per tenant.
CREATE UNIQUE INDEX workspaces_default_idx ON workspaces (tenant_id) WHERE is_default;

CREATE TABLE users (
  id uuid PRIMARY KEY,
  -- Usernames are compared case-insensitively: stored lower-case.
  username text NOT NULL UNIQUE,
  password_hash text,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  -- Set while the user holds system-admin in any tenant: platform operators span tenants.
  is_system_admin boolean NOT NULL DEFAULT false,
  disabled_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE memberships (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('read-only', 'auditor', 'security-analyst', 'tenant-admin', 'system-admin')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- Insertion order: "first tenant" is the oldest membership even within one millisecond.
  seq bigserial NOT NULL,
  PRIMARY KEY (user_id, tenant_id)
);
CREATE INDEX memberships_tenant_idx ON memberships (tenant_id);

-- A login session: the chain of refresh tokens and the access tokens issued from it. Revoking the
-- session (logout, refresh-token reuse) revokes all of them at once.
CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  revoked_reason text
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE refresh_tokens (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  token_hash text NOT NULL,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX refresh_tokens_session_idx ON refresh_tokens (session_id);

-- Access tokens revoked individually (logout), kept until they would have expired anyway.
CREATE TABLE revoked_access_tokens (
  jti uuid PRIMARY KEY,
  expires_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  -- The first characters of the key, shown in listings so users can tell keys apart.
  key_prefix text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  -- The tenant the key was created in; a tenant-scoped key (allowed_ips) belongs to it alone.
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid REFERENCES workspaces (id) ON DELETE CASCADE,
  tenant_ids uuid[] NOT NULL,
  permissions text[] NOT NULL,
  allowed_ips text[] NOT NULL DEFAULT '{}',
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at);

CREATE TABLE audit_logs (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid,
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'system')),
  actor_id uuid,
  actor_name text NOT NULL,
  action text NOT NULL,
  target_type text,
  target_id text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  ip text,
  request_id text,
  created_at timestamptz NOT NULL
);
CREATE INDEX audit_logs_tenant_idx ON audit_logs (tenant_id, created_at DESC);
CREATE INDEX audit_logs_action_idx ON audit_logs (tenant_id, action, created_at DESC);

-- Token buckets shared by every API process (rate limits per tenant).
CREATE TABLE rate_limit_buckets (
  key text PRIMARY KEY,
  tokens double precision NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Failed-login counters per username and per client address.
CREATE TABLE login_throttle (
  key text PRIMARY KEY,
  failures integer NOT NULL,
  window_started_at timestamptz NOT NULL,
  locked_until timestamptz
);

CREATE UNIQUE INDEX refresh_tokens_hash_idx ON refresh_tokens (token_hash);
