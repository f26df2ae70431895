import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { inWorkspace, workspaceIs, type Scope } from '../../../platform/db/scope.js';
import type { Severity } from '../rules/rule-types.js';
// Provided by the applications module through createComplianceModule (criticality-source.ts).
import { resourceCriticality } from './criticality-source.js';
import { cveFacts } from './cve-facts-source.js';
import { exposedAmong, exposedResources } from './exposure.js';
import { riskScore, type RiskFactors } from './risk-score.js';
import '../tables.js';
import { neighbourIds } from '../../graph/index.js';

/**
 * The stored risk score (finding_rows.risk_score, issue 23 items 1 and 2): GET /findings/scored
 * pages by it through an index instead of scoring every finding per request. Its inputs change in
 * other places than the finding, and each of them calls rescoreFindings in its own transaction:
 *
 *   severity     a trigger writes its share at once (migration 0030); the audit's end and the KEV
 *                import rescore exactly
 *   KEV, EPSS    the vulndb import (KEV and EPSS snapshots): the findings naming a CVE, every workspace
 *   exposure     the end of every audit (exposure findings opened or resolved) and of every graph write
 *                (an edge to or from an exposed resource, an Internet node)
 *   criticality  business services and applications created, changed or deleted; graph writes (a
 *                node's properties decide which application holds it)
 *
 * Only rows whose score changes are written.
 */
export interface RescoreFilter {
  /** Only the findings of these resources. */
  resourceIds?: string[];
  /** Only findings that name a CVE. */
  withCves?: boolean;
}

interface ScoreRow {
  id: string;
  severity: Severity;
  resource_id: string;
  cve_ids: string[];
}

const cveKey = (id: string) => id.trim().toUpperCase();

/** The score and factors of each row, from the inputs as they are in `db` now. */
export async function scoreRows(db: Kysely<Database>, scope: Scope, now: Date, rows: ScoreRow[]): Promise<Map<string, { score: number; factors: RiskFactors }>> {
  const scores = new Map<string, { score: number; factors: RiskFactors }>();
  if (rows.length === 0) return scores;
  const cves = [...new Set(rows.flatMap((r) => r.cve_ids.map(cveKey)).filter(Boolean))];
  const [facts, exposed, criticality] = await Promise.all([
    cveFacts(db, cves),
    // A page's few rows ask about their own resources; a rescore of many computes the whole set once.
    rows.length <= 500 ? exposedAmong(db, scope, now, [...new Set(rows.map((r) => r.resource_id))]) : exposedResources(db, scope, now),
    resourceCriticality(db, scope, [...new Set(rows.map((r) => r.resource_id))]),
  ]);
  for (const row of rows) {
    const known = row.cve_ids.map((c) => facts.get(cveKey(c))).filter((x) => x !== undefined);
    const epss = known.map((k) => k.epss).filter((e): e is number => e !== null);
    scores.set(
      row.id,
      riskScore({
        severity: row.severity,
        kev: known.some((k) => k.kev),
        epss: epss.length ? Math.max(...epss) : null,
        exposed: exposed.has(row.resource_id),
        criticality: criticality.get(row.resource_id) ?? null,
      }),
    );
  }
  return scores;
}

// Each statement holds PGlite's one connection, and 10,000 rows through every index of finding_rows
// take seconds there (the dashboard bench's run poll timed out after 5 min behind a first
// 100,000-node audit on PGlite, these UPDATEs the likely holder). A thousand keeps each hold short;
// requests waiting for the connection run in between.
const WRITE_CHUNK = 1_000;

/** Recomputes the stored risk score of the workspace's findings (of `filter`); returns how many moved. */
export async function rescoreFindings(db: Kysely<Database>, scope: Scope, now: Date, filter: RescoreFilter = {}): Promise<number> {
  if (filter.resourceIds && filter.resourceIds.length === 0) return 0;
  let q = db.selectFrom('finding_rows as f').select(['f.id', 'f.severity', 'f.resource_id', 'f.cve_ids', 'f.risk_score']).where(inWorkspace(scope, 'f'));
  if (filter.resourceIds) q = q.where('f.resource_id', '=', sql<string>`ANY(${[...new Set(filter.resourceIds)]}::text[])`);
  if (filter.withCves) q = q.where(sql<boolean>`cardinality(f.cve_ids) > 0`);
  const rows = await q.execute();
  const scores = await scoreRows(db, scope, now, rows as ScoreRow[]);
  const changed = rows.filter((r) => scores.get(r.id)!.score !== r.risk_score);
  for (let i = 0; i < changed.length; i += WRITE_CHUNK) {
    const chunk = changed.slice(i, i + WRITE_CHUNK);
    await sql`
      UPDATE finding_rows AS f SET risk_score = v.score
      FROM unnest(${chunk.map((r) => r.id)}::text[], ${chunk.map((r) => scores.get(r.id)!.score)}::smallint[]) AS v(id, score)
      WHERE ${workspaceIs(scope, 'f')} AND f.id = v.id`.execute(db);
  }
  return changed.length;
}

/**
 * After a KEV or EPSS import: the findings naming a CVE, in every workspace that has any (one
 * workspace at a time; exposure and criticality are per workspace).
 */
export async function rescoreCveFindings(db: Kysely<Database>, now: Date): Promise<number> {
  const workspaces = await sql<{ tenant_id: string; workspace_id: string }>`
    SELECT DISTINCT tenant_id, workspace_id FROM finding_rows WHERE cardinality(cve_ids) > 0`.execute(db);
  let moved = 0;
  for (const w of workspaces.rows) moved += await rescoreFindings(db, { tenantId: w.tenant_id, workspaceId: w.workspace_id }, now, { withCves: true });
  return moved;
}

/**
 * After a graph write: the findings of the written nodes and of their neighbours (an edge carries
 * exposure from a resource open to the world or an Internet node to the other end; a node's
 * properties decide the applications, hence the criticality, it has). `formerNeighbours`: those of
 * deleted nodes, read before the delete.
 */
export async function rescoreAround(db: Kysely<Database>, scope: Scope, now: Date, nodeIds: string[], formerNeighbours: string[] = []): Promise<number> {
  const around = [...nodeIds, ...formerNeighbours, ...(await neighbourIds(db, scope, nodeIds))];
  return around.length ? rescoreFindings(db, scope, now, { resourceIds: around }) : 0;
}
