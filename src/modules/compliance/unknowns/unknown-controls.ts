import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { workspaceIs, type Scope } from '../../../platform/db/scope.js';
import './tables.js';
import '../tables.js';

/**
 * Unknown outcomes per control: the read side of evaluation_unknowns that the control state, the
 * score, /controls/status and the reports share (one definition of "unknown" for every number).
 *
 * An evaluation is unknown when a rule could not judge a resource (tables.ts, UNKNOWN_REASONS). A
 * control is unknown while no active finding maps to it and at least one unknown evaluation does;
 * an unknown evaluation maps to the same controls a finding of its rule would (its rule's primary
 * control and its text's framework mappings: `countedControls` in control-state.ts).
 */

/** The unknown evaluations of one rule text: how many, and the controls they count for. */
export interface UnknownGroup {
  framework: string;
  control_id: string;
  framework_mappings: Array<{ framework: string; control_id: string }>;
  /** (rule, resource) evaluations of this group whose latest outcome is unknown. */
  evaluations: number;
}

/** A predicate on the SQL column of a resource id: which resources count (a report of one asset group). */
export type ResourceFilter = (resourceId: RawBuilder<string>) => RawBuilder<boolean>;

/**
 * The workspace's unknown evaluations grouped by the rule text they carry (few groups, however many
 * rows): callers expand each group's controls, as control-state.ts does for findings. With
 * `resources`, only the evaluations of the resources it accepts.
 */
export async function unknownGroups(db: Kysely<Database>, scope: Scope, resources?: ResourceFilter): Promise<UnknownGroup[]> {
  const { rows } = await sql<UnknownGroup>`
    SELECT d.framework, d.control_id, t.framework_mappings, d.evaluations::int AS evaluations
    FROM (
      SELECT u.framework, u.control_id, u.text_id, count(*) AS evaluations
      FROM evaluation_unknowns u
      WHERE ${workspaceIs(scope, 'u')} AND ${resources ? resources(sql.ref<string>('u.resource_id')) : sql<boolean>`true`}
      GROUP BY u.framework, u.control_id, u.text_id
    ) d
    JOIN finding_texts t ON ${workspaceIs(scope, 't')} AND t.id = d.text_id`.execute(db);
  return rows;
}
