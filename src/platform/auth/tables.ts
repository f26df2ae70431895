import type { Generated } from 'kysely';
import type { Json, NullableTimestamp, Timestamp } from '../db/schema.js';
import type { Role } from '../rbac/roles.js';

/** Identity tables (migration 0002), read by the authenticator and written by the tenancy module. */
declare module '../db/schema.js' {
  interface Database {
    accounts: { id: string; name: string; created_at: Timestamp };
    tenants: {
      id: string;
      account_id: string;
      name: string;
      slug: string;
      plan: 'free' | 'pro' | 'enterprise';
      onboarding_completed: boolean;
      /** Password sign-ins into the tenant need a second factor (migration 0033). */
      mfa_required: Generated<boolean>;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    workspaces: {
      id: string;
      tenant_id: string;
      name: string;
      is_default: boolean;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    users: {
      id: string;
      username: string;
      password_hash: string | null;
      account_id: string;
      is_system_admin: boolean;
      disabled_at: NullableTimestamp;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    memberships: { user_id: string; tenant_id: string; role: Role; created_at: Timestamp; updated_at: Timestamp; seq: Generated<number> };
    sessions: {
      id: string;
      user_id: string;
      created_at: Timestamp;
      revoked_at: NullableTimestamp;
      revoked_reason: string | null;
      /** Opened with a password and no second factor (migration 0033). */
      password_only: Generated<boolean>;
    };
    refresh_tokens: {
      id: string;
      session_id: string;
      token_hash: string;
      tenant_id: string;
      workspace_id: string;
      expires_at: Timestamp;
      used_at: NullableTimestamp;
      created_at: Timestamp;
    };
    revoked_access_tokens: { jti: string; expires_at: Timestamp };
    api_keys: {
      id: string;
      name: string;
      key_prefix: string;
      key_hash: string;
      created_by: string | null;
      account_id: string;
      tenant_id: string;
      workspace_id: string | null;
      tenant_ids: string[];
      permissions: string[];
      allowed_ips: string[];
      expires_at: NullableTimestamp;
      revoked_at: NullableTimestamp;
      last_used_at: NullableTimestamp;
      created_at: Timestamp;
    };
    audit_logs: {
      id: string;
      tenant_id: string;
      workspace_id: string | null;
      actor_type: 'user' | 'api_key' | 'system' | 'respondent_link';
      actor_id: string | null;
      actor_name: string;
      action: string;
      target_type: string | null;
      target_id: string | null;
      details: Json<Record<string, unknown>>;
      ip: string | null;
      request_id: string | null;
      created_at: Timestamp;
    };
    rate_limit_buckets: { key: string; tokens: number; updated_at: Timestamp };
    login_throttle: { key: string; failures: number; window_started_at: Timestamp; locked_until: NullableTimestamp };
  }
}

export {};
