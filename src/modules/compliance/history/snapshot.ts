import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import { json } from '../../../platform/db/schema.js';
import { inWorkspace, workspaceIs, type Scope } from '../../../platform/db/scope.js';
import { controlKey, type ControlState } from '../controls/control-state.js';
import { SEVERITIES } from '../rules/rule-types.js';
import type { ComplianceHistoryTable, HistoryKind } from './tables.js';
import './tables.js';

/** The series name of the whole workspace's state, beside each framework's. */
export const OVERALL = 'overall';

type PointValues = Omit<ComplianceHistoryTable, 'tenant_id' | 'workspace_id' | 'framework' | 'kind' | 'point_at' | 'taken_at' | 'run_id'>;

interface FindingTally {
  by_severity: Record<string, number>;
  open_findings: number;
  accepted_findings: number;
  resolved_findings: number;
}

const emptyTally = (): FindingTally => ({ by_severity: Object.fromEntries(SEVERITIES.map((s) => [s, 0])), open_findings: 0, accepted_findings: 0, resolved_findings: 0 });

/**
 * Findings per framework (its own control's or a mapped one's, as /controls/status counts them) and
 * overall, by state at `now`: active (open, not accepted) ones by severity, and open, accepted and
 * resolved ones. Counted per (control framework, text, severity, state) first, so only those few
 * groups have their texts' mappings expanded.
 */
async function findingTallies(db: Kysely<Database>, scope: Scope, now: Date): Promise<Map<string, FindingTally>> {
  const { rows } = await sql<{ framework: string; severity: string; state: 'open' | 'accepted' | 'resolved'; n: number }>`
    WITH g AS (
      SELECT r.framework, r.text_id, r.severity,
        CASE WHEN r.status = 'resolved' THEN 'resolved' WHEN r.accepted_until IS NOT NULL AND r.accepted_until > ${now} THEN 'accepted' ELSE 'open' END AS state,
        count(*)::int AS n
      FROM finding_rows r
      WHERE ${workspaceIs(scope, 'r')}
      GROUP BY 1, 2, 3, 4
    )
    SELECT x.framework, g.severity, g.state, sum(g.n)::int AS n
    FROM g
    LEFT JOIN finding_texts t ON ${workspaceIs(scope, 't')} AND t.id = g.text_id
    CROSS JOIN LATERAL (
      SELECT g.framework AS framework
      UNION
      SELECT m->>'framework' FROM jsonb_array_elements(coalesce(t.framework_mappings, '[]'::jsonb)) m
    ) x
    GROUP BY 1, 2, 3
    UNION ALL
    SELECT ${OVERALL}, g.severity, g.state, sum(g.n)::int FROM g GROUP BY 2, 3`.execute(db);
  const tallies = new Map<string, FindingTally>();
  for (const row of rows) {
    let tally = tallies.get(row.framework);
    if (!tally) tallies.set(row.framework, (tally = emptyTally()));
    if (row.state === 'open') {
      tally.open_findings += row.n;
      tally.by_severity[row.severity] = (tally.by_severity[row.severity] ?? 0) + row.n;
    } else if (row.state === 'accepted') tally.accepted_findings += row.n;
    else tally.resolved_findings += row.n;
  }
  return tallies;
}

/** Control counts per framework and overall, as countControls (control-statuses.ts) counts them. */
function controlTallies(state: ControlState): Map<string, Pick<PointValues, 'applicable_controls' | 'passing_controls' | 'failing_controls' | 'unknown_controls'>> {
  const tallies = new Map<string, Pick<PointValues, 'applicable_controls' | 'passing_controls' | 'failing_controls' | 'unknown_controls'>>();
  const overall = { applicable_controls: 0, passing_controls: 0, failing_controls: 0, unknown_controls: 0 };
  for (const [framework, controls] of state.applicable) {
    const counts = { applicable_controls: controls.size, passing_controls: 0, failing_controls: 0, unknown_controls: 0 };
    for (const control of controls) {
      const key = controlKey(framework, control);
      if (state.failing.has(key)) counts.failing_controls++;
      else if (state.unknown.has(key)) counts.unknown_controls++;
      else if (state.automated.has(key) || state.attested.has(key)) counts.passing_controls++;
    }
    tallies.set(framework, counts);
    for (const k of Object.keys(overall) as Array<keyof typeof overall>) overall[k] += counts[k];
  }
  tallies.set(OVERALL, overall);
  return tallies;
}

/** 00:00 UTC of the day of `at`: the point of a day. */
export function dayOf(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

/**
 * Records the state `state` (computed at `at`) as the day's point and, for an audit, as its run's
 * point. The state is the one its caller already has (the audit's end state, which its events compare
 * with): only the finding counts are read here. A day point measured later replaces the day's
 * earlier one; an earlier one never replaces a later one (an audit and the history job racing).
 * Two writes: give it a transaction (the audit's, which also emits its control events).
 */
export async function recordPoints(db: Kysely<Database>, scope: Scope, state: ControlState, at: Date, runId: string | null): Promise<void> {
  const findings = await findingTallies(db, scope, at);
  const controls = controlTallies(state);
  const series = [OVERALL, ...state.applicable.keys()];
  const values = (kind: HistoryKind, pointAt: Date) =>
    series.map((framework) => ({
      tenant_id: scope.tenantId,
      workspace_id: scope.workspaceId,
      framework,
      kind,
      point_at: pointAt,
      taken_at: at,
      run_id: runId,
      score: framework === OVERALL ? state.overall : (state.scores.get(framework as never) ?? 100),
      ...(() => {
        const { by_severity, ...counts } = findings.get(framework) ?? emptyTally();
        return { by_severity: json(by_severity), ...counts };
      })(),
      ...controls.get(framework)!,
    }));
  const rows = [...(runId ? values('run', at) : []), ...values('day', dayOf(at))];
  await db
    .insertInto('compliance_history')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'kind', 'point_at', 'framework'])
        .doUpdateSet((eb) => ({
          taken_at: eb.ref('excluded.taken_at'),
          run_id: eb.ref('excluded.run_id'),
          score: eb.ref('excluded.score'),
          by_severity: eb.ref('excluded.by_severity'),
          open_findings: eb.ref('excluded.open_findings'),
          accepted_findings: eb.ref('excluded.accepted_findings'),
          resolved_findings: eb.ref('excluded.resolved_findings'),
          applicable_controls: eb.ref('excluded.applicable_controls'),
          passing_controls: eb.ref('excluded.passing_controls'),
          failing_controls: eb.ref('excluded.failing_controls'),
          unknown_controls: eb.ref('excluded.unknown_controls'),
        }))
        .where('compliance_history.taken_at', '<=', at),
    )
    .execute();
  // A framework disabled since the day's earlier point is not part of the day's state any more.
  await db
    .deleteFrom('compliance_history')
    .where(inWorkspace(scope))
    .where('kind', '=', 'day')
    .where('point_at', '=', dayOf(at))
    .where('framework', 'not in', series)
    .where('taken_at', '<', at)
    .execute();
}
