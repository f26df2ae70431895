import type { Timestamp } from '../../platform/db/schema.js';

/** Applications, business services and asset groups (migration 0010). */
declare module '../../platform/db/schema.js' {
  interface Database {
    applications: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      name: string;
      description: string;
      filter: string;
      derived: boolean;
      derived_value: string | null;
      derived_keys: string[];
      created_by: string;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    business_services: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      name: string;
      description: string;
      criticality: Criticality;
      sla_tier: string | null;
      owner: string | null;
      created_by: string;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    business_service_applications: {
      service_id: string;
      application_id: string;
      workspace_id: string;
      added_at: Timestamp;
    };
    asset_groups: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      name: string;
      description: string;
      filter: string;
      created_by: string;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
  }
}

export const CRITICALITIES = ['critical', 'high', 'medium', 'low'] as const;
export type Criticality = (typeof CRITICALITIES)[number];

export {};
