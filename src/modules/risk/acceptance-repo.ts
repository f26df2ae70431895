import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, workspaceIs, type Scope } from '../../platform/db/scope.js';
import { openFindingsTable } from '../compliance/index.js';
import { stateOf, isOrphaned, type AcceptanceRow } from './acceptance-state.js';
import './tables.js';

export interface AcceptanceFacts {
  /** Snapshot findings still open. */
  openCovered: number;
  /** Open findings of the group that are not in the snapshot (group scope only). */
  uncovered: number;
}

/** Per acceptance: how many of its findings are still open, and (groups) how many new ones it misses. */
export async function factsOf(db: Kysely<Database>, scope: Scope, rows: AcceptanceRow[]): Promise<Map<string, AcceptanceFacts>> {
  const facts = new Map<string, AcceptanceFacts>(rows.map((r) => [r.id, { openCovered: 0, uncovered: 0 }]));
  if (rows.length === 0) return facts;
  const ids = rows.map((r) => r.id);
  const covered = await sql<{ acceptance_id: string; n: number }>`
    SELECT raf.acceptance_id, count(*)::int AS n
    FROM risk_acceptance_findings raf
    JOIN ${openFindingsTable(scope)} f ON f.workspace_id = raf.workspace_id AND f.id = raf.finding_id
    WHERE raf.acceptance_id = ANY(${ids}::uuid[])
    GROUP BY raf.acceptance_id`.execute(db);
  for (const row of covered.rows) facts.get(row.acceptance_id)!.openCovered = row.n;
  const groups = rows.filter((r) => r.scope === 'group');
  if (groups.length) {
    const uncovered = await sql<{ acceptance_id: string; n: number }>`
      SELECT a.id AS acceptance_id, count(f.id)::int AS n
      FROM risk_acceptances a
      JOIN ${openFindingsTable(scope)} f ON f.workspace_id = a.workspace_id AND f.group_id = a.group_id
      WHERE a.id = ANY(${groups.map((g) => g.id)}::uuid[]) AND ${workspaceIs(scope, 'a')}
        AND NOT EXISTS (SELECT 1 FROM risk_acceptance_findings raf WHERE raf.acceptance_id = a.id AND raf.finding_id = f.id)
      GROUP BY a.id`.execute(db);
    for (const row of uncovered.rows) facts.get(row.acceptance_id)!.uncovered = row.n;
  }
  return facts;
}

export function present(row: AcceptanceRow, now: Date, facts: AcceptanceFacts) {
  return {
    id: row.id,
    scope: row.scope,
    finding_id: row.finding_id,
    group_id: row.group_id,
    group_label: row.group_label,
    owner: row.owner,
    reason: row.reason,
    expires_at: row.expires_at,
    state: stateOf(row, now, facts.uncovered),
    orphaned: isOrphaned(row, now, facts.openCovered),
    snapshot: row.snapshot,
    created_by: row.created_by,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
    revoked_by: row.revoked_by,
  };
}

/** The unrevoked acceptance of a finding (scope finding) or of a group (scope group), if any. */
export function unrevoked(db: Kysely<Database>, scope: Scope, kind: 'finding' | 'group', key: string) {
  return db
    .selectFrom('risk_acceptances')
    .selectAll()
    .where(inWorkspace(scope))
    .where('scope', '=', kind)
    .where(kind === 'finding' ? 'finding_id' : 'group_id', '=', key)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}
