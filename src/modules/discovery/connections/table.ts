import type { Selectable } from 'kysely';
import type { Database, Timestamp } from '../../../platform/db/schema.js';

/** Cloud account connections (migration 0018). */
declare module '../../../platform/db/schema.js' {
  interface Database {
    cloud_connections: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      name: string;
      provider: 'aws';
      auth: 'assume_role' | 'access_key';
      role_arn: string | null;
      external_id: string | null;
      /** SecretBox-sealed `{access_key_id, secret_access_key}` (access_key only). */
      secrets: string | null;
      access_key_hint: string | null;
      created_by: string;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
  }
}

export type ConnectionRow = Selectable<Database['cloud_connections']>;
