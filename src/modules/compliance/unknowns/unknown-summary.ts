import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { workspaceIs, type Scope } from '../../../platform/db/scope.js';
import type { ResourceFilter } from './unknown-controls.js';
import './tables.js';
import '../tables.js';

/**
 * What a report's method section says could not be evaluated: the unknown evaluations of the
 * selection, in total and per rule and reason. An unknown counts for a framework when its rule's
 * primary control or a mapping of its text (finding_texts t) is in it, as for a finding
 * (finding-counts.ts).
 */
export interface UnknownSelection {
  /** Only unknowns that count for this framework (all without it). */
  framework: string | null;
  /** Only unknowns of the resources this accepts (a report of one asset group). */
  resources?: ResourceFilter;
}

function conditions(scope: Scope, selection: UnknownSelection): RawBuilder<boolean> {
  const { framework, resources } = selection;
  const ofResources = resources ? resources(sql.ref<string>('u.resource_id')) : sql<boolean>`true`;
  const inFramework = framework ? sql<boolean>`(u.framework = ${framework} OR t.framework_mappings @> ${JSON.stringify([{ framework }])}::jsonb)` : sql<boolean>`true`;
  return sql<boolean>`${workspaceIs(scope, 'u')} AND ${ofResources} AND ${inFramework}`;
}

/** How many unknown evaluations, and on how many distinct resources. */
export async function unknownTotals(db: Kysely<Database>, scope: Scope, selection: UnknownSelection): Promise<{ evaluations: number; resources: number }> {
  const { rows } = await sql<{ evaluations: number; resources: number }>`
    SELECT count(*)::int AS evaluations, count(DISTINCT u.resource_id)::int AS resources
    FROM evaluation_unknowns u JOIN finding_texts t ON t.workspace_id = u.workspace_id AND t.id = u.text_id
    WHERE ${conditions(scope, selection)}`.execute(db);
  return rows[0] ?? { evaluations: 0, resources: 0 };
}

/** Unknowns per rule and reason: the resources affected and the property paths they missed; most resources first. */
export async function unknownsByRule(
  db: Kysely<Database>,
  scope: Scope,
  selection: UnknownSelection,
): Promise<Array<{ rule_id: string; reason: string; resources: number; missing_paths: string[] | null }>> {
  const { rows } = await sql<{ rule_id: string; reason: string; resources: number; missing_paths: string[] | null }>`
    SELECT u.rule_id, u.reason, count(DISTINCT u.resource_id)::int AS resources,
      array_agg(DISTINCT p.path) FILTER (WHERE p.path IS NOT NULL) AS missing_paths
    FROM evaluation_unknowns u
    JOIN finding_texts t ON t.workspace_id = u.workspace_id AND t.id = u.text_id
    LEFT JOIN LATERAL unnest(u.missing_paths) AS p(path) ON true
    WHERE ${conditions(scope, selection)}
    GROUP BY u.rule_id, u.reason
    ORDER BY count(DISTINCT u.resource_id) DESC, u.rule_id, u.reason`.execute(db);
  return rows;
}
