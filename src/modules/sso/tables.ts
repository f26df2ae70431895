import type { Selectable } from 'kysely';
import type { Database, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';
import '../../platform/auth/tables.js';

export type SsoProtocol = 'oidc' | 'saml';
export type JitRole = 'read-only' | 'auditor' | 'security-analyst' | 'tenant-admin';

/** SSO tables (migration 0011). */
declare module '../../platform/db/schema.js' {
  interface Database {
    sso_configs: {
      tenant_id: string;
      protocol: SsoProtocol;
      provider: string;
      issuer: string | null;
      client_id: string | null;
      client_secret_enc: string | null;
      scopes: string[];
      metadata_url: string | null;
      metadata_xml: string | null;
      metadata_inline: boolean;
      metadata_fetched_at: NullableTimestamp;
      idp_entity_id: string | null;
      idp_sso_url: string | null;
      idp_slo_url: string | null;
      idp_certificates: string[];
      service_url: string;
      default_role: JitRole;
      app_redirect_url: string | null;
      /** SAML: accept SHA-1 signatures and digests (migration 0019; a legacy IdP only). */
      allow_sha1: boolean;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    sso_identities: {
      id: string;
      tenant_id: string;
      protocol: SsoProtocol;
      issuer: string;
      subject: string;
      user_id: string;
      email: string | null;
      display_name: string | null;
      created_at: Timestamp;
      last_login_at: Timestamp;
    };
    sso_login_states: {
      state_hash: string;
      tenant_id: string;
      browser_hash: string;
      code_verifier: string;
      nonce: string;
      expires_at: Timestamp;
      created_at: Timestamp;
    };
    sso_saml_requests: { tenant_id: string; request_id: string; value: string; expires_at: Timestamp };
    sso_saml_assertions: { tenant_id: string; assertion_id: string; expires_at: Timestamp; created_at: Timestamp };
    sso_sessions: {
      session_id: string;
      identity_id: string;
      tenant_id: string;
      saml_session_index: string | null;
      created_at: Timestamp;
    };
  }
}

export type SsoConfigRow = Selectable<Database['sso_configs']>;
