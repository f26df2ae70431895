import type { Generated } from 'kysely';
import type { Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';
import type { Milestone, PoamSeverity, PoamStatus } from './model.js';

/** POA&M tables (migration 0008). */
declare module '../../platform/db/schema.js' {
  interface Database {
    poam_counters: { tenant_id: string; last_number: number };
    poam_items: PoamItemsTable;
    poam_comments: {
      id: Generated<number>;
      tenant_id: string;
      number: number;
      author: string;
      text: string;
      status_from: PoamStatus | null;
      status_to: PoamStatus | null;
      created_at: Timestamp;
    };
    poam_evidence: {
      id: string;
      tenant_id: string;
      number: number;
      filename: string;
      content_type: string;
      size_bytes: number;
      sha256: string;
      storage_key: string;
      description: string | null;
      uploaded_by: string;
      created_at: Timestamp;
    };
    poam_follower: { name: string; position: number; updated_at: Timestamp };
    poam_follower_receipts: { seq: number; handled_at: Timestamp };
  }
}

export interface PoamItemsTable {
  tenant_id: string;
  workspace_id: string;
  number: number;
  weakness_name: string;
  weakness_description: string;
  control_ids: string[];
  severity: PoamSeverity;
  point_of_contact: string;
  /** date column: read back as 'YYYY-MM-DD' (see platform/db/database.ts). */
  scheduled_completion: string;
  milestones: Json<Milestone[]>;
  status: PoamStatus;
  vendor_dependency: boolean;
  deviation_request: string | null;
  finding_id: string | null;
  source: string;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  closed_at: NullableTimestamp;
}

export {};
