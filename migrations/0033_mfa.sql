-- Multi-factor sign-in for password accounts (issue 24): a TOTP authenticator per user, single-use
-- recovery codes, and a tenant setting that makes it mandatory. SSO sign-ins rely on the IdP's.

-- One authenticator per user. The row exists from enrollment; confirmed_at is set once the user has
-- proved with a code that the authenticator works, and only a confirmed one is asked for at login.
CREATE TABLE user_totp (
  user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  -- The base32 secret sealed with the service's secret box (AES-256-GCM, the user id as associated
  -- data): a copy of the database alone does not give the codes when CONTROLGRAPH_SECRET is set.
  secret_sealed text NOT NULL,
  confirmed_at timestamptz,
  -- The last 30-second time step a code was accepted for: a code is refused at or before it, so a
  -- code seen once (shoulder, proxy log) cannot be played again within its window.
  last_time_step bigint,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Ten per user, shown once; only a SHA-256 of each is kept (they are random, so a fast hash is
-- enough), and a used one keeps its row with used_at so "codes left" is a count.
CREATE TABLE user_recovery_codes (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, code_hash)
);

-- A tenant admin's choice: every password sign-in into the tenant needs a second factor.
ALTER TABLE tenants ADD COLUMN mfa_required boolean NOT NULL DEFAULT false;

-- Whether the session was opened with a password and no second factor (SSO sessions are not: the
-- IdP decides). While the token's tenant requires MFA, such a session may only enroll an
-- authenticator. Sessions older than this column count as not password-only.
ALTER TABLE sessions ADD COLUMN password_only boolean NOT NULL DEFAULT false;
