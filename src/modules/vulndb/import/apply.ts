import { sql, type Kysely } from 'kysely';
// The stored risk scores of findings naming a CVE move with KEV and EPSS (compliance/findings/rescore.ts).
import { rescoreCveFindings } from '../../compliance/index.js';
import type { Database } from '../../../platform/db/schema.js';
import type { Clock } from '../../../platform/clock.js';
import { reconcileKevSeverities } from '../escalation.js';
import type { VulnSource } from '../tables.js';
import { liveColumns, type StageTable } from './stage.js';

/**
 * Applying a staged run to the live tables: the "swap" of an import, run in one transaction (the
 * caller's), so readers see either all of the old data or all of the new. Two semantics:
 *
 * - KEV and EPSS files are complete snapshots: the live table becomes exactly the file (new rows
 *   inserted, changed rows updated, rows missing from the file deleted).
 * - NVD and OSV files are slices (a year feed, an API page, one ecosystem's advisories): they are
 *   merged by CVE id / advisory id, and a record's CPE matches or affected packages are replaced with
 *   the record's.
 *
 * Unchanged records (same content digest, same scores) are not written at all, so a re-import changes
 * nothing. Within one run the last occurrence of an id wins.
 */
export interface ApplyCounts {
  inserted: number;
  updated: number;
  deleted: number;
  unchanged: number;
  findingsEscalated: number;
  findingsRestored: number;
}

const raw = (text: string) => sql.raw(text);

function assignments(columns: string[], key: string): string {
  return columns
    .filter((c) => c !== key)
    .map((c) => `${c} = EXCLUDED.${c}`)
    .join(', ');
}

async function distinctStaged(trx: Kysely<Database>, table: StageTable, key: string, runId: string): Promise<number> {
  const row = await sql<{ n: number }>`SELECT count(DISTINCT ${sql.ref(key)})::int AS n FROM ${sql.table(table)} WHERE run_id = ${runId}::uuid`.execute(trx);
  return row.rows[0]?.n ?? 0;
}

/** KEV / EPSS: the live table becomes the snapshot. */
async function replaceSnapshot(
  trx: Kysely<Database>,
  runId: string,
  now: Date,
  spec: { live: 'vulndb_kev' | 'vulndb_epss'; stage: StageTable; changed: string },
): Promise<Omit<ApplyCounts, 'findingsEscalated' | 'findingsRestored'>> {
  const columns = liveColumns(spec.stage);
  const list = columns.join(', ');
  const upsert = await sql<{ inserted: number; updated: number }>`
    WITH src AS (
      SELECT DISTINCT ON (cve_id) * FROM ${sql.table(spec.stage)} WHERE run_id = ${runId}::uuid ORDER BY cve_id, seq DESC
    ), up AS (
      INSERT INTO ${sql.table(spec.live)} (${raw(list)}, updated_at)
      SELECT ${raw(list)}, ${now}::timestamptz FROM src
      ON CONFLICT (cve_id) DO UPDATE SET ${raw(assignments(columns, 'cve_id'))}, updated_at = EXCLUDED.updated_at
      WHERE ${raw(spec.changed)}
      RETURNING (xmax = 0) AS inserted
    )
    SELECT (count(*) FILTER (WHERE inserted))::int AS inserted, (count(*) FILTER (WHERE NOT inserted))::int AS updated FROM up`.execute(trx);
  const deleted = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM ${sql.table(spec.live)} l
      WHERE NOT EXISTS (SELECT 1 FROM ${sql.table(spec.stage)} s WHERE s.run_id = ${runId}::uuid AND s.cve_id = l.cve_id)
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM gone`.execute(trx);
  const { inserted, updated } = upsert.rows[0]!;
  const total = await distinctStaged(trx, spec.stage, 'cve_id', runId);
  return { inserted, updated, deleted: deleted.rows[0]!.n, unchanged: total - inserted - updated };
}

/** NVD / OSV: merge the run's records; replace the children of the records that changed. */
async function mergeRecords(
  trx: Kysely<Database>,
  runId: string,
  now: Date,
  spec: {
    live: 'vulndb_cves' | 'vulndb_osv_advisories';
    stage: StageTable;
    key: string;
    child: 'vulndb_cpe_matches' | 'vulndb_osv_affected';
    childStage: StageTable;
    childKey: string;
  },
): Promise<Omit<ApplyCounts, 'findingsEscalated' | 'findingsRestored'>> {
  const key = raw(spec.key);
  // Mark the newest staged row of each id whose content differs from the live row (or is new).
  await sql`
    UPDATE ${sql.table(spec.stage)} s SET changed = true
    FROM (SELECT DISTINCT ON (${key}) seq FROM ${sql.table(spec.stage)} WHERE run_id = ${runId}::uuid ORDER BY ${key}, seq DESC) w
    WHERE s.run_id = ${runId}::uuid AND s.seq = w.seq
      AND NOT EXISTS (SELECT 1 FROM ${sql.table(spec.live)} l WHERE l.${key} = s.${key} AND l.content_hash = s.content_hash)`.execute(trx);
  await sql`
    DELETE FROM ${sql.table(spec.child)} c USING ${sql.table(spec.stage)} s
    WHERE s.run_id = ${runId}::uuid AND s.changed AND c.${raw(spec.childKey)} = s.${key}`.execute(trx);
  const columns = liveColumns(spec.stage).filter((c) => c !== 'changed');
  const list = columns.join(', ');
  const upsert = await sql<{ inserted: number; updated: number }>`
    WITH up AS (
      INSERT INTO ${sql.table(spec.live)} (${raw(list)}, updated_at)
      SELECT ${raw(list)}, ${now}::timestamptz FROM ${sql.table(spec.stage)} WHERE run_id = ${runId}::uuid AND changed
      ON CONFLICT (${key}) DO UPDATE SET ${raw(assignments(columns, spec.key))}, updated_at = EXCLUDED.updated_at
      RETURNING (xmax = 0) AS inserted
    )
    SELECT (count(*) FILTER (WHERE inserted))::int AS inserted, (count(*) FILTER (WHERE NOT inserted))::int AS updated FROM up`.execute(trx);
  const childColumns = liveColumns(spec.childStage).join(', ');
  const childList = raw(
    childColumns
      .split(', ')
      .map((c) => `c.${c}`)
      .join(', '),
  );
  await sql`
    INSERT INTO ${sql.table(spec.child)} (${raw(childColumns)})
    SELECT ${childList} FROM ${sql.table(spec.childStage)} c
    JOIN ${sql.table(spec.stage)} s ON s.run_id = c.run_id AND s.seq = c.seq
    WHERE c.run_id = ${runId}::uuid AND s.changed`.execute(trx);
  const { inserted, updated } = upsert.rows[0]!;
  const total = await distinctStaged(trx, spec.stage, spec.key, runId);
  return { inserted, updated, deleted: 0, unchanged: total - inserted - updated };
}

/** One import per source applies at a time (syncs and seeds on several workers); held to commit. */
export async function lockSource(trx: Kysely<Database>, source: VulnSource): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`vulndb:${source}`}))`.execute(trx);
}

export async function applyRun(trx: Kysely<Database>, clock: Clock, runId: string, source: VulnSource): Promise<ApplyCounts> {
  const now = clock.now();
  await lockSource(trx, source);
  let counts: Omit<ApplyCounts, 'findingsEscalated' | 'findingsRestored'>;
  let findings = { escalated: 0, restored: 0 };
  switch (source) {
    case 'kev':
      counts = await replaceSnapshot(trx, runId, now, { live: 'vulndb_kev', stage: 'vulndb_kev_stage', changed: 'vulndb_kev.content_hash IS DISTINCT FROM EXCLUDED.content_hash' });
      findings = await reconcileKevSeverities(trx, clock);
      await rescoreCveFindings(trx, now);
      break;
    case 'epss':
      counts = await replaceSnapshot(trx, runId, now, {
        live: 'vulndb_epss',
        stage: 'vulndb_epss_stage',
        changed: '(vulndb_epss.epss, vulndb_epss.percentile) IS DISTINCT FROM (EXCLUDED.epss, EXCLUDED.percentile)',
      });
      await rescoreCveFindings(trx, now);
      break;
    case 'nvd':
      counts = await mergeRecords(trx, runId, now, {
        live: 'vulndb_cves',
        stage: 'vulndb_nvd_stage',
        key: 'cve_id',
        child: 'vulndb_cpe_matches',
        childStage: 'vulndb_cpe_stage',
        childKey: 'cve_id',
      });
      break;
    case 'osv':
      counts = await mergeRecords(trx, runId, now, {
        live: 'vulndb_osv_advisories',
        stage: 'vulndb_osv_stage',
        key: 'id',
        child: 'vulndb_osv_affected',
        childStage: 'vulndb_osv_affected_stage',
        childKey: 'advisory_id',
      });
      break;
  }
  return { ...counts, findingsEscalated: findings.escalated, findingsRestored: findings.restored };
}

/** What the live tables of a source hold now: record count and the date of the newest data. */
export async function liveSummary(trx: Kysely<Database>, source: VulnSource): Promise<{ count: number; newest: Date | null }> {
  const query = {
    kev: sql<{ n: number; newest: Date | null }>`SELECT count(*)::int AS n, NULL::timestamptz AS newest FROM vulndb_kev`,
    epss: sql<{ n: number; newest: Date | null }>`SELECT count(*)::int AS n, NULL::timestamptz AS newest FROM vulndb_epss`,
    nvd: sql<{ n: number; newest: Date | null }>`SELECT count(*)::int AS n, max(last_modified) AS newest FROM vulndb_cves`,
    osv: sql<{ n: number; newest: Date | null }>`SELECT count(*)::int AS n, max(modified) AS newest FROM vulndb_osv_advisories`,
  }[source];
  const row = (await query.execute(trx)).rows[0]!;
  return { count: row.n, newest: row.newest };
}
