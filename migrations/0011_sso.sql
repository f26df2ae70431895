-- Single sign-on (issue 13): the tenant's SSO configuration, the users it provisioned, pending
-- logins, SAML assertion ids already used, and which sessions an SSO login created.

-- One configuration per tenant: OpenID Connect or SAML 2.0.
CREATE TABLE sso_configs (
  tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  protocol text NOT NULL CHECK (protocol IN ('oidc', 'saml')),
  -- The identity provider's name as the admin gave it (okta, azure, google, keycloak, saml, ...).
  provider text NOT NULL,
  -- OIDC
  issuer text,
  client_id text,
  -- AES-256-GCM under a key derived from the token-signing key (see src/modules/sso/secret-box.ts).
  client_secret_enc text,
  scopes text[] NOT NULL DEFAULT '{}',
  -- SAML: where the IdP metadata comes from (URL, or inline XML for air-gapped set-ups) and what
  -- was read from it last.
  metadata_url text,
  metadata_xml text,
  metadata_inline boolean NOT NULL DEFAULT false,
  metadata_fetched_at timestamptz,
  idp_entity_id text,
  idp_sso_url text,
  idp_slo_url text,
  idp_certificates text[] NOT NULL DEFAULT '{}',
  -- Common
  service_url text NOT NULL,
  default_role text NOT NULL CHECK (default_role IN ('read-only', 'auditor', 'security-analyst', 'tenant-admin')),
  app_redirect_url text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK (protocol <> 'oidc' OR (issuer IS NOT NULL AND client_id IS NOT NULL AND client_secret_enc IS NOT NULL)),
  CHECK (protocol <> 'saml' OR metadata_url IS NOT NULL OR metadata_xml IS NOT NULL)
);

-- A user signed in through SSO, keyed by the IdP's (issuer, subject) within the tenant: never by
-- the e-mail address, which the IdP may let users change.
CREATE TABLE sso_identities (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  protocol text NOT NULL CHECK (protocol IN ('oidc', 'saml')),
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  email text,
  display_name text,
  created_at timestamptz NOT NULL,
  last_login_at timestamptz NOT NULL,
  UNIQUE (tenant_id, issuer, subject)
);
CREATE INDEX sso_identities_user_idx ON sso_identities (user_id);

-- OIDC logins between the redirect to the IdP and the callback: one-time, short-lived. The state
-- is stored hashed; browser_hash binds the login to the cookie of the browser that started it.
CREATE TABLE sso_login_states (
  state_hash text PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  browser_hash text NOT NULL,
  code_verifier text NOT NULL,
  nonce text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX sso_login_states_expiry_idx ON sso_login_states (expires_at);

-- SAML AuthnRequest ids we sent, so a response's InResponseTo can be checked (and used once).
CREATE TABLE sso_saml_requests (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  request_id text NOT NULL,
  value text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, request_id)
);
CREATE INDEX sso_saml_requests_expiry_idx ON sso_saml_requests (expires_at);

-- SAML assertion ids already accepted, kept until the assertion would have expired anyway: a
-- replayed assertion is refused.
CREATE TABLE sso_saml_assertions (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  assertion_id text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, assertion_id)
);
CREATE INDEX sso_saml_assertions_expiry_idx ON sso_saml_assertions (expires_at);

-- Sessions opened by an SSO login (single log-out revokes them).
CREATE TABLE sso_sessions (
  session_id uuid PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  identity_id uuid NOT NULL REFERENCES sso_identities (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  saml_session_index text,
  created_at timestamptz NOT NULL
);
CREATE INDEX sso_sessions_identity_idx ON sso_sessions (identity_id);
