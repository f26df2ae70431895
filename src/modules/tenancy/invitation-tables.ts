import type { Selectable } from 'kysely';
import type { Database, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';
import type { Role } from '../../platform/rbac/roles.js';

export type InvitationStatus = 'pending' | 'accepted' | 'declined' | 'revoked';

/** Invitations into a tenant (migration 0019). */
declare module '../../platform/db/schema.js' {
  interface Database {
    membership_invitations: {
      id: string;
      tenant_id: string;
      username: string;
      user_id: string | null;
      role: Role;
      invited_by_type: 'user' | 'api_key';
      invited_by_id: string | null;
      invited_by_name: string;
      status: InvitationStatus;
      created_at: Timestamp;
      expires_at: Timestamp;
      responded_at: NullableTimestamp;
    };
  }
}

export type InvitationRow = Selectable<Database['membership_invitations']>;
