import type { Generated } from 'kysely';
import type { NullableTimestamp, Timestamp } from '../db/schema.js';
import type { Role } from '../rbac/roles.js';

/**
 * The identity tables the authenticator reads (migration 0002); the tenancy module writes them. They
 * are declared here, not in modules/tenancy, because the platform imports no module. The tables only
 * the tenancy module uses are in modules/tenancy/tables.ts.
 */
declare module '../db/schema.js' {
  interface Database {
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
  }
}

export {};
