import type { ColumnType, Generated } from 'kysely';
import type { Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';

/** A jsonb column with a database default: optional on insert. */
type JsonWithDefault<T> = ColumnType<T, string | undefined, string>;

/** The vulnerability store's tables (migration 0004), added to the Kysely schema by declaration merging. */
export type VulnSource = 'kev' | 'epss' | 'nvd' | 'osv';
/** api: POST /api/v1/vulndb/imports (an upload or a URL). */
export type ImportTrigger = 'cli' | 'seed' | 'schedule' | 'manual' | 'api';
/** queued: an API import accepted and waiting for a worker. */
export type ImportStatus = 'queued' | 'running' | 'succeeded' | 'unchanged' | 'failed' | 'cancelled';

/** `date` columns are read back as 'YYYY-MM-DD' strings (see platform/db/database.ts). */
type DateColumn = string;

/** Also the row a KEV record becomes on import (import/records.ts): the two must not drift apart. */
export interface KevColumns {
  cve_id: string;
  vendor_project: string;
  product: string;
  vulnerability_name: string;
  date_added: DateColumn;
  short_description: string;
  required_action: string;
  due_date: DateColumn | null;
  known_ransomware_campaign_use: string;
  notes: string;
  cwes: string[];
  content_hash: string;
}

export interface CveColumns {
  cve_id: string;
  source_identifier: string | null;
  vuln_status: string | null;
  published: NullableTimestamp;
  last_modified: NullableTimestamp;
  description: string | null;
  cvss_v3_score: number | null;
  cvss_v3_severity: string | null;
  cvss_v3_vector: string | null;
  cvss_v4_score: number | null;
  cvss_v4_severity: string | null;
  cvss_v2_score: number | null;
  cwes: string[];
  reference_urls: string[];
  content_hash: string;
}

/** Also the row an NVD CPE match becomes on import (import/records.ts). */
export interface CpeColumns {
  cve_id: string;
  config_index: number;
  node_index: number;
  match_index: number;
  config_operator: string;
  node_operator: string;
  negate: boolean;
  vulnerable: boolean;
  criteria: string;
  part: string;
  vendor: string;
  product: string;
  version: string;
  cpe_update: string;
  target_sw: string;
  version_start_including: string | null;
  version_start_excluding: string | null;
  version_end_including: string | null;
  version_end_excluding: string | null;
}

interface OsvColumns {
  id: string;
  modified: NullableTimestamp;
  published: NullableTimestamp;
  withdrawn: NullableTimestamp;
  aliases: string[];
  related: string[];
  cve_ids: string[];
  summary: string | null;
  details: string | null;
  severity: Json<Array<{ type: string; score: string }>>;
  reference_urls: string[];
  content_hash: string;
}

/** One OSV range as stored: only ECOSYSTEM and SEMVER ranges are kept (GIT ranges name commits). */
export interface StoredRange {
  type: 'ECOSYSTEM' | 'SEMVER';
  events: Array<{ introduced?: string; fixed?: string; last_affected?: string; limit?: string }>;
}

interface AffectedColumns {
  advisory_id: string;
  idx: number;
  ecosystem: string;
  ecosystem_key: string;
  name: string;
  name_key: string;
  purl: string | null;
  ranges: Json<StoredRange[]>;
  versions: string[];
  /** The distribution's rating of the advisory for this package (migration 0024), e.g. Debian's urgency. */
  urgency: string | null;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    vulndb_kev: KevColumns & { updated_at: Timestamp };
    vulndb_kev_stage: KevColumns & { run_id: string; seq: number };
    vulndb_epss: { cve_id: string; epss: number; percentile: number; updated_at: Timestamp };
    vulndb_epss_stage: { run_id: string; seq: number; cve_id: string; epss: number; percentile: number };
    vulndb_cves: CveColumns & { updated_at: Timestamp };
    vulndb_nvd_stage: CveColumns & { run_id: string; seq: number; changed: boolean };
    vulndb_cpe_matches: CpeColumns;
    vulndb_cpe_stage: CpeColumns & { run_id: string; seq: number };
    vulndb_osv_advisories: OsvColumns & { updated_at: Timestamp };
    vulndb_osv_stage: OsvColumns & { run_id: string; seq: number; changed: boolean };
    vulndb_osv_affected: AffectedColumns;
    vulndb_osv_affected_stage: AffectedColumns & { run_id: string; seq: number };
    vulndb_import_runs: {
      id: string;
      seq: Generated<number>;
      /** Null while an API import is queued (detected from the content once read). */
      source: VulnSource | null;
      trigger: ImportTrigger;
      location: string;
      job_id: string | null;
      status: ImportStatus;
      started_at: Timestamp;
      heartbeat_at: Timestamp;
      finished_at: NullableTimestamp;
      bytes: Generated<number>;
      sha256: string | null;
      records: Generated<number>;
      inserted: Generated<number>;
      updated: Generated<number>;
      deleted: Generated<number>;
      unchanged: Generated<number>;
      findings_escalated: Generated<number>;
      findings_restored: Generated<number>;
      metadata: JsonWithDefault<Record<string, unknown>>;
      error: string | null;
      error_offset: number | null;
      error_record: number | null;
      error_context: string | null;
      size_bytes: ColumnType<number | null, number | null | undefined, number | null>;
      requested_by: ColumnType<string | null, string | null | undefined, string | null>;
      /** The staging id of the job attempt carrying out an API import (migration 0023); null: the run's id. */
      stage_id: ColumnType<string | null, string | null | undefined, string | null>;
    };
    vulndb_sources: {
      source: VulnSource;
      origin: ImportTrigger | null;
      location: string | null;
      record_count: Generated<number>;
      data_version: string | null;
      data_date: NullableTimestamp;
      metadata: JsonWithDefault<Record<string, unknown>>;
      last_run_id: string | null;
      last_run_at: NullableTimestamp;
      last_status: ImportStatus | null;
      last_error: string | null;
      last_success_at: NullableTimestamp;
      last_success_run_id: string | null;
      updated_at: Timestamp;
    };
    vulndb_sync_locations: {
      location: string;
      source: VulnSource;
      etag: string | null;
      last_modified: string | null;
      sha256: string | null;
      checked_at: NullableTimestamp;
      changed_at: NullableTimestamp;
    };
  }
}

export {};
