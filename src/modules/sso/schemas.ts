import { Type } from 'typebox';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { SLUG_PATTERN } from '../tenancy/index.js';

export const JIT_ROLES = ['read-only', 'auditor', 'security-analyst', 'tenant-admin'] as const;

/**
 * One body for both protocols (`provider: saml` selects SAML), checked field by field by the
 * service so every problem is named at once rather than as a oneOf mismatch.
 */
export const SsoConfigBody = Type.Object(
  {
    provider: Type.String({
      minLength: 1,
      maxLength: 50,
      pattern: '^[A-Za-z0-9][A-Za-z0-9 ._-]*$',
      description: 'The identity provider: `saml` for SAML 2.0; any other name (okta, azure, google, keycloak, …) means OpenID Connect',
    }),
    issuer: Type.Optional(Type.String({ maxLength: 2000, description: 'OIDC issuer URL (discovery at <issuer>/.well-known/openid-configuration)' })),
    client_id: Type.Optional(Type.String({ maxLength: 500 })),
    client_secret: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: 'Write-only; stored encrypted. May be omitted on a replace that keeps issuer and client_id: the stored secret is kept.',
      }),
    ),
    scopes: Type.Optional(
      Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$', maxLength: 100 }), { maxItems: 20, description: 'OIDC scopes; default openid email profile' }),
    ),
    metadata_url: Type.Optional(Type.String({ maxLength: 2000, description: 'SAML: URL of the IdP metadata' })),
    metadata_xml: Type.Optional(Type.String({ maxLength: 1024 * 1024, description: 'SAML: the IdP metadata itself, for air-gapped set-ups' })),
    default_role: Type.Optional(
      Type.String({ description: `Role of users created at their first SSO login (just in time): ${JIT_ROLES.join(', ')}; default read-only, never above tenant-admin` }),
    ),
    app_redirect_url: Type.Optional(
      Nullable(Type.String({ maxLength: 2000, description: 'After login, redirect here with the token response in the URL fragment (instead of answering JSON)' })),
    ),
    allow_sha1: Type.Optional(
      Type.Boolean({
        description:
          'SAML: accept responses and log-out requests signed with RSA-SHA1 or with SHA-1 digests. Default false: refused (401), since SHA-1 collisions are practical. Only for a legacy IdP that cannot sign with SHA-256.',
      }),
    ),
    service_url: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: "This service's public base URL as browsers reach it; the callback, ACS and entity id derive from it. Default: the origin of this request.",
      }),
    ),
  },
  { additionalProperties: false },
);

const Certificate = Type.Object({
  subject: Type.String(),
  issuer: Type.String(),
  not_before: Timestamp,
  not_after: Timestamp,
  fingerprint_sha256: Type.String(),
});

export const SsoConfig = Type.Object(
  {
    tenant_id: Uuid,
    protocol: StringEnum(['oidc', 'saml'] as const),
    provider: Type.String(),
    issuer: Nullable(Type.String()),
    client_id: Nullable(Type.String()),
    client_secret_set: Type.Boolean({ description: 'The secret itself is never returned' }),
    client_secret_readable: Type.Boolean({ description: 'false when the secret was encrypted under another CONTROLGRAPH_SECRET' }),
    scopes: Type.Array(Type.String()),
    metadata_url: Nullable(Type.String()),
    metadata_inline: Type.Boolean(),
    metadata_fetched_at: Nullable(Timestamp),
    idp_entity_id: Nullable(Type.String()),
    idp_sso_url: Nullable(Type.String()),
    idp_slo_url: Nullable(Type.String()),
    idp_certificates: Type.Array(Certificate),
    default_role: StringEnum(JIT_ROLES),
    app_redirect_url: Nullable(Type.String()),
    allow_sha1: Type.Boolean({ description: 'SAML: SHA-1 signatures are accepted (a legacy IdP); false for OIDC' }),
    service_url: Type.String(),
    login_url: Type.String({ description: 'Where users start signing in' }),
    redirect_uri: Nullable(Type.String({ description: 'OIDC: the redirect URI to register at the IdP' })),
    sp_entity_id: Nullable(Type.String({ description: 'SAML: our entity id (the audience)' })),
    acs_url: Nullable(Type.String({ description: 'SAML: assertion consumer service (recipient and destination)' })),
    sp_metadata_url: Nullable(Type.String()),
    slo_url: Nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'The tenant SSO configuration; the client secret is never returned' },
);

export const SsoCheck = Type.Object({
  check: Type.String(),
  field: Nullable(Type.String({ description: 'The configuration field the check concerns' })),
  status: StringEnum(['ok', 'failed', 'warning'] as const),
  message: Type.String(),
});

export const SsoTestResult = Type.Object({
  ok: Type.Boolean({ description: 'true when no check failed' }),
  protocol: StringEnum(['oidc', 'saml'] as const),
  checks: Type.Array(SsoCheck),
  errors: Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' }, description: 'What is wrong, by field' }),
});

export const SlugParams = Type.Object({ slug: Type.String({ pattern: SLUG_PATTERN, maxLength: 63 }) });

/**
 * Where the browser lands after an SSO login started with `?to=`: `console` is the web console, with
 * the session cookies set and no token in any URL. A name from this list, never a URL: nothing here
 * can send a browser anywhere else.
 */
export const LANDINGS = ['console'] as const;
export type Landing = (typeof LANDINGS)[number];
export const LoginQuery = Type.Object(
  {
    to: Type.Optional(
      StringEnum(LANDINGS, {
        description:
          "`console`: after the login, set the web console's session cookies and redirect to `/` (instead of answering the token " +
          "response or redirecting to the tenant's app URL)",
      }),
    ),
  },
  // Other parameters were ignored before `to` existed, and still are.
  { additionalProperties: true },
);

export const OidcCallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 512 })),
    iss: Type.Optional(Type.String({ maxLength: 2000 })),
    error: Type.Optional(Type.String({ maxLength: 200 })),
    error_description: Type.Optional(Type.String({ maxLength: 2000 })),
    error_uri: Type.Optional(Type.String({ maxLength: 2000 })),
    session_state: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true },
);

export const AcsBody = Type.Object(
  {
    SAMLResponse: Type.String({ minLength: 1, maxLength: 700_000, description: 'base64 SAML Response (HTTP-POST binding)' }),
    RelayState: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);

export const SloQuery = Type.Object(
  {
    SAMLRequest: Type.Optional(Type.String({ maxLength: 100_000 })),
    SAMLResponse: Type.Optional(Type.String({ maxLength: 100_000 })),
    RelayState: Type.Optional(Type.String({ maxLength: 1000 })),
    SigAlg: Type.Optional(Type.String({ maxLength: 200 })),
    Signature: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true },
);

export const SloResult = Type.Object({
  logged_out: Type.Boolean(),
  sessions_revoked: Type.Integer(),
});

export const Redirect = Type.Null({ description: 'Redirect (see the Location header)' });
