import type { Json, Timestamp } from '../db/schema.js';

/** The audit log (migration 0002): written by platform/audit/audit-log.ts, listed by the tenancy module. */
declare module '../db/schema.js' {
  interface Database {
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
  }
}

export {};
