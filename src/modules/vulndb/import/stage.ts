import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { ParsedRecord } from './parsers.js';

/**
 * Column lists of the staging tables, with the SQL types json_to_recordset reads them as. A batch of
 * rows travels as one JSON parameter: one short statement per batch whatever its size, and no
 * per-row parameters (PostgreSQL allows 65,535 per statement).
 */
const COLUMNS = {
  vulndb_kev_stage: {
    seq: 'integer',
    cve_id: 'text',
    vendor_project: 'text',
    product: 'text',
    vulnerability_name: 'text',
    date_added: 'date',
    short_description: 'text',
    required_action: 'text',
    due_date: 'date',
    known_ransomware_campaign_use: 'text',
    notes: 'text',
    cwes: 'text[]',
    content_hash: 'text',
  },
  vulndb_epss_stage: { seq: 'integer', cve_id: 'text', epss: 'double precision', percentile: 'double precision' },
  vulndb_nvd_stage: {
    seq: 'integer',
    cve_id: 'text',
    source_identifier: 'text',
    vuln_status: 'text',
    published: 'timestamptz',
    last_modified: 'timestamptz',
    description: 'text',
    cvss_v3_score: 'double precision',
    cvss_v3_severity: 'text',
    cvss_v3_vector: 'text',
    cvss_v4_score: 'double precision',
    cvss_v4_severity: 'text',
    cvss_v2_score: 'double precision',
    cwes: 'text[]',
    reference_urls: 'text[]',
    content_hash: 'text',
  },
  vulndb_cpe_stage: {
    seq: 'integer',
    cve_id: 'text',
    config_index: 'integer',
    node_index: 'integer',
    match_index: 'integer',
    config_operator: 'text',
    node_operator: 'text',
    negate: 'boolean',
    vulnerable: 'boolean',
    criteria: 'text',
    part: 'text',
    vendor: 'text',
    product: 'text',
    version: 'text',
    cpe_update: 'text',
    target_sw: 'text',
    version_start_including: 'text',
    version_start_excluding: 'text',
    version_end_including: 'text',
    version_end_excluding: 'text',
  },
  vulndb_osv_stage: {
    seq: 'integer',
    id: 'text',
    modified: 'timestamptz',
    published: 'timestamptz',
    withdrawn: 'timestamptz',
    aliases: 'text[]',
    related: 'text[]',
    cve_ids: 'text[]',
    summary: 'text',
    details: 'text',
    severity: 'jsonb',
    reference_urls: 'text[]',
    content_hash: 'text',
  },
  vulndb_osv_affected_stage: {
    seq: 'integer',
    advisory_id: 'text',
    idx: 'integer',
    ecosystem: 'text',
    ecosystem_key: 'text',
    name: 'text',
    name_key: 'text',
    purl: 'text',
    ranges: 'jsonb',
    versions: 'text[]',
    urgency: 'text',
  },
} as const;

export type StageTable = keyof typeof COLUMNS;
export const STAGE_TABLES = Object.keys(COLUMNS) as StageTable[];

/** Column names of a live table fed from a staging table (everything but seq). */
export function liveColumns(table: StageTable): string[] {
  return Object.keys(COLUMNS[table]).filter((c) => c !== 'seq');
}

async function insertBatch(db: Kysely<Database>, table: StageTable, runId: string, rows: Array<Record<string, unknown>>): Promise<void> {
  if (rows.length === 0) return;
  const columns = COLUMNS[table];
  const names = Object.keys(columns);
  const list = sql.raw(names.join(', '));
  const definition = sql.raw(names.map((n) => `${n} ${columns[n as keyof typeof columns]}`).join(', '));
  await sql`INSERT INTO ${sql.table(table)} (run_id, ${list})
    SELECT ${runId}::uuid, ${list} FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(${definition})`.execute(db);
}

const FLUSH_ROWS = 2_000;
const FLUSH_CHARS = 4 * 1024 * 1024;

/** Buffers parsed records and writes them to the staging tables in batches. */
export class StageWriter {
  private pending = new Map<StageTable, Array<Record<string, unknown>>>();
  private rows = 0;
  private chars = 0;
  staged = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly runId: string,
  ) {}

  private push(table: StageTable, row: Record<string, unknown>, size: number): void {
    let list = this.pending.get(table);
    if (!list) this.pending.set(table, (list = []));
    list.push(row);
    this.rows++;
    this.chars += size;
  }

  add(record: ParsedRecord, seq: number): void {
    switch (record.source) {
      case 'kev':
        this.push('vulndb_kev_stage', { seq, ...record.row }, 600);
        break;
      case 'epss':
        this.push('vulndb_epss_stage', { seq, ...record.row }, 60);
        break;
      case 'nvd':
        this.push('vulndb_nvd_stage', { seq, ...record.row }, (record.row.description?.length ?? 0) + 200 * record.row.reference_urls.length + 400);
        for (const cpe of record.cpes) this.push('vulndb_cpe_stage', { seq, ...cpe }, 300);
        break;
      case 'osv':
        this.push('vulndb_osv_stage', { seq, ...record.row }, (record.row.details?.length ?? 0) + 500);
        for (const affected of record.affected) this.push('vulndb_osv_affected_stage', { seq, ...affected }, 200 + 20 * affected.versions.length);
        break;
    }
    this.staged++;
  }

  get full(): boolean {
    return this.rows >= FLUSH_ROWS || this.chars >= FLUSH_CHARS;
  }

  async flush(): Promise<void> {
    const batches = this.pending;
    this.pending = new Map();
    this.rows = 0;
    this.chars = 0;
    // Parents before children: nothing references them yet, but the order keeps the tables readable.
    for (const table of STAGE_TABLES) {
      const rows = batches.get(table);
      if (rows) await insertBatch(this.db, table, this.runId, rows);
    }
  }
}

/** Removes a run's staging rows (after it was applied or failed). */
export async function dropStaged(db: Kysely<Database>, runId: string): Promise<void> {
  for (const table of STAGE_TABLES) await sql`DELETE FROM ${sql.table(table)} WHERE run_id = ${runId}::uuid`.execute(db);
}
