import type { Selectable } from 'kysely';
import type { Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';
import type { IntegrationType } from './catalog.js';

/** Event delivery tables (migration 0006). */
declare module '../../platform/db/schema.js' {
  interface Database {
    integrations: {
      id: string;
      tenant_id: string;
      type: IntegrationType;
      name: string;
      source: 'integration' | 'alert_rule';
      status: 'active' | 'disabled';
      config: Json<Record<string, unknown>>;
      events: string[];
      secrets: string;
      enabled_at: Timestamp;
      disabled_at: NullableTimestamp;
      disabled_reason: string | null;
      created_by: string;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    integration_deliveries: {
      id: string;
      integration_id: string;
      tenant_id: string;
      workspace_id: string | null;
      event_id: string;
      event_seq: string | number;
      event_type: string;
      envelope: string;
      status: 'pending' | 'succeeded' | 'failed';
      attempts: number;
      round_attempts: number;
      next_attempt_at: NullableTimestamp;
      last_status_code: number | null;
      last_error: string | null;
      job_id: string | null;
      created_at: Timestamp;
      updated_at: Timestamp;
      completed_at: NullableTimestamp;
    };
    integration_delivery_attempts: {
      delivery_id: string;
      number: number;
      attempted_at: Timestamp;
      outcome: 'succeeded' | 'failed';
      status_code: number | null;
      latency_ms: number | null;
      response_body: string | null;
      error: string | null;
      next_attempt_at: NullableTimestamp;
    };
    integration_dispatch_state: {
      id: number;
      cursor: string | number;
      gaps: Json<Array<{ from: number; to: number; since: number }>>;
      updated_at: Timestamp;
    };
  }
}

import type { Database } from '../../platform/db/schema.js';
export type IntegrationRow = Selectable<Database['integrations']>;
export type DeliveryRow = Selectable<Database['integration_deliveries']>;
export type AttemptRow = Selectable<Database['integration_delivery_attempts']>;
