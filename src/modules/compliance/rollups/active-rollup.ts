import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { workspaceIs, type Scope } from '../../../platform/db/scope.js';
import { SEVERITIES } from '../rules/rule-types.js';
import './tables.js';
import '../tables.js';

/**
 * The read side of the findings read model (migration 0032): the few rollup rows of a workspace
 * instead of its findings. Every count here equals what the same question asked of finding_rows
 * answers; `controlgraph check` (consistency.ts) proves it.
 */

export type RollupState = 'open' | 'accepted' | 'resolved';

/** Findings of one (rule, control, text, severity) in one state. */
export interface ControlRollupRow {
  rule_id: string;
  framework: string;
  control_id: string;
  text_id: string;
  severity_rank: number;
  state: RollupState;
  n: number;
  framework_mappings: Array<{ framework: string; control_id: string }>;
}

/**
 * The findings of a workspace per (rule, control, text, severity, state) at `now`, with their texts'
 * framework mappings. The rollup stores a finding whose acceptance expired but is not yet recorded
 * by the sweeper as accepted; those few (an index range of finding_rows_accepted_idx) are moved back
 * to open here, so an acceptance stops applying at the exact moment it expires.
 */
export async function controlRollup(db: Kysely<Database>, scope: Scope, now: Date): Promise<ControlRollupRow[]> {
  const [stored, lapsed] = await Promise.all([
    sql<ControlRollupRow>`
      SELECT r.rule_id, r.framework, r.control_id, r.text_id, r.severity_rank, r.state, r.n::int AS n, t.framework_mappings
      FROM finding_rollup r
      JOIN finding_texts t ON t.workspace_id = r.workspace_id AND t.id = r.text_id
      WHERE ${workspaceIs(scope, 'r')} AND r.n <> 0`.execute(db),
    sql<Omit<ControlRollupRow, 'state' | 'framework_mappings'>>`
      SELECT f.rule_id, f.framework, f.control_id, f.text_id, f.severity_rank, count(*)::int AS n
      FROM finding_rows f
      WHERE ${workspaceIs(scope, 'f')} AND f.accepted_until IS NOT NULL AND f.accepted_until <= ${now} AND f.status = 'open'
      GROUP BY 1, 2, 3, 4, 5`.execute(db),
  ]);
  const rows = stored.rows.map((r) => ({ ...r }));
  const key = (r: Omit<ControlRollupRow, 'state' | 'n' | 'framework_mappings'>, state: RollupState) =>
    [r.rule_id, r.framework, r.control_id, r.text_id, r.severity_rank, state].join('\u0000');
  const byKey = new Map(rows.map((r) => [key(r, r.state), r]));
  for (const moved of lapsed.rows) {
    const accepted = byKey.get(key(moved, 'accepted'));
    if (!accepted) continue; // not yet in the rollup: cannot happen while the triggers run
    accepted.n -= moved.n;
    const open = byKey.get(key(moved, 'open'));
    if (open) open.n += moved.n;
    else rows.push({ ...moved, state: 'open', framework_mappings: accepted.framework_mappings });
  }
  return rows.filter((r) => r.n !== 0);
}

/** The rollup states of each status filter of the findings lists. */
export const STATES_OF_STATUS: Record<'open' | 'accepted' | 'resolved' | 'all', RollupState[]> = {
  open: ['open'],
  accepted: ['accepted'],
  resolved: ['resolved'],
  all: ['open', 'accepted', 'resolved'],
};

/** The severity ranks of a severity filter (every rank without one). */
export const severityRanks = (severities: string[] | undefined): number[] =>
  severities?.length ? severities.map((s) => 5 - SEVERITIES.indexOf(s as (typeof SEVERITIES)[number])) : [1, 2, 3, 4, 5];

/** The number of findings of a status (as the findings list filters it) and, when given, severities. */
export function rollupTotal(rows: ControlRollupRow[], filter: { status: keyof typeof STATES_OF_STATUS; severities?: string[] }): number {
  const states = new Set(STATES_OF_STATUS[filter.status]);
  const ranks = new Set(severityRanks(filter.severities));
  return rows.filter((r) => states.has(r.state) && ranks.has(r.severity_rank)).reduce((n, r) => n + r.n, 0);
}

/** Active findings (open, not accepted) per (rule, control, text, severity). */
export async function activeRollup(db: Kysely<Database>, scope: Scope, now: Date): Promise<ControlRollupRow[]> {
  return (await controlRollup(db, scope, now)).filter((r) => r.state === 'open');
}

/** Unknown evaluations per rule text, with the text's mappings (the shape unknownGroups returns). */
export async function unknownRollup(db: Kysely<Database>, scope: Scope) {
  const { rows } = await sql<{ framework: string; control_id: string; framework_mappings: Array<{ framework: string; control_id: string }>; evaluations: number }>`
    SELECT r.framework, r.control_id, t.framework_mappings, sum(r.n)::int AS evaluations
    FROM unknown_rollup r
    JOIN finding_texts t ON t.workspace_id = r.workspace_id AND t.id = r.text_id
    WHERE ${workspaceIs(scope, 'r')} AND r.n <> 0
    GROUP BY r.framework, r.control_id, r.text_id, t.framework_mappings`.execute(db);
  return rows;
}

/** Unknown evaluations of the workspace and the distinct resources they concern. */
export async function unknownRollupTotals(db: Kysely<Database>, scope: Scope): Promise<{ evaluations: number; resources: number }> {
  const { rows } = await sql<{ evaluations: number; resources: number }>`
    SELECT
      coalesce((SELECT sum(n) FROM unknown_rollup WHERE ${workspaceIs(scope)}), 0)::int AS evaluations,
      coalesce((SELECT resources FROM unknown_workspace_rollup WHERE ${workspaceIs(scope)}), 0)::int AS resources`.execute(db);
  return rows[0]!;
}
