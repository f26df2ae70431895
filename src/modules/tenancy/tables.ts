import type { NullableTimestamp, Timestamp } from '../../platform/db/schema.js';

/**
 * Tenancy tables only this module reads and writes (migration 0002). The identity tables the
 * authenticator reads (tenants, workspaces, users, memberships, sessions, api_keys, ...) are declared in
 * platform/auth/tables.ts: the platform imports no module.
 */
declare module '../../platform/db/schema.js' {
  interface Database {
    accounts: { id: string; name: string; created_at: Timestamp };
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
    login_throttle: { key: string; failures: number; window_started_at: Timestamp; locked_until: NullableTimestamp };
  }
}

export {};
