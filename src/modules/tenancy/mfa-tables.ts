import type { ColumnType } from 'kysely';
import type { NullableTimestamp, Timestamp } from '../../platform/db/schema.js';

/** Multi-factor sign-in (migration 0033); tenants.mfa_required and sessions.password_only are in platform/auth/tables.ts (the authenticator reads them). */
declare module '../../platform/db/schema.js' {
  interface Database {
    user_totp: {
      user_id: string;
      secret_sealed: string;
      confirmed_at: NullableTimestamp;
      /** bigint: read back as a string. */
      last_time_step: ColumnType<string | null, number | null, number | null>;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    user_recovery_codes: {
      user_id: string;
      code_hash: string;
      used_at: NullableTimestamp;
      created_at: Timestamp;
    };
  }
}

export {};
