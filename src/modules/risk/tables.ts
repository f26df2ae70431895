import type { Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';

export interface AcceptanceSnapshot {
  finding_ids: string[];
  resource_ids: string[];
  controls: string[];
}

/** Risk acceptance tables (migration 0005). */
declare module '../../platform/db/schema.js' {
  interface Database {
    risk_acceptances: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      scope: 'finding' | 'group';
      finding_id: string | null;
      group_id: string;
      group_label: string | null;
      owner: string;
      reason: string;
      expires_at: Timestamp;
      snapshot: Json<AcceptanceSnapshot>;
      created_by: string;
      created_at: Timestamp;
      revoked_at: NullableTimestamp;
      revoked_by: string | null;
      expiry_recorded_at: NullableTimestamp;
    };
    risk_acceptance_findings: { acceptance_id: string; workspace_id: string; finding_id: string };
  }
}

export {};
