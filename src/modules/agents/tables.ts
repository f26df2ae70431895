import type { ColumnType } from 'kysely';
import type { Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';

/** Agent tables (migration 0012). */
declare module '../../platform/db/schema.js' {
  interface Database {
    agents: {
      agent_id: string;
      tenant_id: string;
      workspace_id: string;
      node_id: string | null;
      hostname: string | null;
      agent_version: string | null;
      api_key_id: string | null;
      first_seen_at: Timestamp;
      last_seen_at: Timestamp;
      reports_processed: ColumnType<number, number | undefined, number>;
      reports_ignored: ColumnType<number, number | undefined, number>;
    };
    agent_hosts: {
      tenant_id: string;
      workspace_id: string;
      node_id: string;
      agent_id: string;
      last_scan_id: string;
      last_scanned_at: Timestamp;
      last_received_at: Timestamp;
      collectors: Json<Record<string, CollectorState>>;
      packages_digest: string;
      vuln_state: string;
      sbom_serial: string;
      sbom_version: number;
      sbom_updated_at: Timestamp;
      created_at: Timestamp;
    };
    agent_host_packages: PackageRow;
    agent_host_collections: {
      tenant_id: string;
      workspace_id: string;
      node_id: string;
      collection: string;
      items: Json<unknown[]>;
      item_count: number;
      digest: string;
      updated_at: Timestamp;
    };
    agent_host_files: {
      tenant_id: string;
      workspace_id: string;
      node_id: string;
      path: string;
      sha256: string | null;
      size_bytes: ColumnType<string | number | null, number | null, number | null>;
      modified_at: NullableTimestamp;
      permissions: string | null;
      owner: string | null;
      group: string | null;
      first_seen_at: Timestamp;
      updated_at: Timestamp;
    };
    agent_reports: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      agent_id: string;
      node_id: string | null;
      scan_id: string;
      scanned_at: Timestamp;
      received_at: Timestamp;
      outcome: 'processed' | 'ignored';
      reason: string | null;
      compressed_bytes: number;
      raw_bytes: number;
      summary: Json<Record<string, unknown>>;
    };
  }
}

export interface CollectorState {
  status: string;
  reason: string | null;
  items: number;
}

export interface StoredAdvisory {
  id: string;
  source: string;
  cve_ids: string[];
  fixed_versions: string[];
  summary: string | null;
}

export interface PackageRow {
  tenant_id: string;
  workspace_id: string;
  node_id: string;
  manager: string;
  name: string;
  arch: string;
  version: string;
  source_name: string | null;
  source_version: string | null;
  installed_at: NullableTimestamp;
  purl: string;
  reported_cves: ColumnType<string[], string[] | undefined, string[]>;
  matched_cves: ColumnType<string[], string[] | undefined, string[]>;
  advisories: ColumnType<StoredAdvisory[], string | undefined, string>;
}

export {};
