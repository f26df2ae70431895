import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { workspaceIs, type Scope } from '../../../platform/db/scope.js';
import { activeAt, hasLiveAcceptances } from '../../risk/index.js';
import { SEVERITIES } from '../rules/rule-types.js';
import type { ResourceFilter } from '../unknowns/unknown-controls.js';
import '../tables.js';
import { activeRollup } from '../rollups/active-rollup.js';
import { countsBySeverity } from '../rollups/rollup-counts.js';

/**
 * Which active findings count, and how many of each severity: the numbers /controls/status shows
 * (total_findings, by_severity) and every report format prints, from this one place.
 */

/** A finding of `findings f` counts for a framework when its own control or a counted mapping is in it. */
export function findingInFramework(framework: string): RawBuilder<boolean> {
  return sql<boolean>`(f.framework = ${framework} OR f.framework_mappings @> ${JSON.stringify([{ framework }])}::jsonb)`;
}

export interface FindingSelection {
  /** Only findings that count for this framework (all findings without it). */
  framework?: string | null;
  /** Only findings of the resources this accepts (a report of one asset group). */
  resources?: ResourceFilter;
}

/** The condition on `findings f`: the workspace's active findings (open, not risk-accepted) of the selection. */
export async function activeFindingsWhere(db: Kysely<Database>, scope: Scope, now: Date, selection: FindingSelection = {}): Promise<RawBuilder<boolean>> {
  const live = await hasLiveAcceptances(db, scope.workspaceId, now);
  return sql<boolean>`${workspaceIs(scope, 'f')} AND ${activeAt('f', now, live)}
    AND ${selection.framework ? findingInFramework(selection.framework) : sql<boolean>`true`}
    AND ${selection.resources ? selection.resources(sql.ref<string>('f.resource_id')) : sql<boolean>`true`}`;
}

/**
 * The workspace's active findings of the selection as a derived table, for raw SQL that joins or
 * groups them (`FROM ${await activeFindingsTable(…)} f`): PostgreSQL flattens it into the outer query,
 * so indexes on findings serve the caller's conditions as before.
 */
export async function activeFindingsTable(db: Kysely<Database>, scope: Scope, now: Date, selection: FindingSelection = {}): Promise<RawBuilder<unknown>> {
  return sql`(SELECT f.* FROM findings f WHERE ${await activeFindingsWhere(db, scope, now, selection)})`;
}

/** Active findings by severity (every severity present, 0 when none) and their total. */
export async function activeFindingCounts(
  db: Kysely<Database>,
  scope: Scope,
  now: Date,
  selection: FindingSelection = {},
): Promise<{ bySeverity: Record<string, number>; total: number }> {
  // The workspace's read model answers unless the selection is of some resources only.
  if (!selection.resources) return countsBySeverity(await activeRollup(db, scope, now), selection.framework);
  const where = await activeFindingsWhere(db, scope, now, selection);
  const { rows } = await sql<{ severity: string; n: number }>`SELECT f.severity, count(*)::int AS n FROM findings f WHERE ${where} GROUP BY f.severity`.execute(db);
  const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<string, number>;
  for (const row of rows) bySeverity[row.severity] = row.n;
  return { bySeverity, total: Object.values(bySeverity).reduce((a, b) => a + b, 0) };
}
