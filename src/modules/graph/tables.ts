import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../../platform/db/schema.js';

/** Graph tables (migration 0003). */
declare module '../../platform/db/schema.js' {
  interface Database {
    nodes: {
      tenant_id: string;
      workspace_id: string;
      id: string;
      provider: string;
      region: string;
      type: string;
      native_id: string;
      name: string;
      account_id: string | null;
      properties: Json<Record<string, unknown>>;
      tags: Json<Record<string, unknown>>;
      source: Json<NodeSource> | null;
      created_at: Timestamp;
      updated_at: Timestamp;
      /** A digest of what an audit rule reads of the node, kept by the database (migration 0031). */
      content_hash: Generated<string>;
    };
    edges: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      source: string;
      target: string;
      type: string;
      properties: Json<Record<string, unknown>>;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
  }
}

/** Where a node came from, when known: its Terraform resource block makes patches possible. */
export interface NodeSource {
  kind: string;
  address?: string;
  file?: string;
  content?: string;
  [key: string]: unknown;
}

export {};
