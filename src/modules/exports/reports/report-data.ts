import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { controlKey, findingsByControl } from '../../compliance/index.js';
import { controlStatuses, countControls, type ControlCounts } from '../../compliance/index.js';
import { activeFindingCounts, activeFindingsTable, activeFindingsWhere } from '../../compliance/index.js';
import { controlTitle, frameworks as catalogs } from '../../compliance/index.js';
import { allRules, auditBaselines } from '../../compliance/index.js';
import { enabledFrameworks } from '../../compliance/index.js';
import { SEVERITIES, type FrameworkId } from '../../compliance/index.js';
import type { ResourceFilter } from '../../compliance/index.js';
import { assetGroupName, assetGroupPredicate } from '../../applications/index.js';
import { collectMethod, type ReportMethod } from './report-method.js';
import { countNodes, countNodesMatching, nodesInWorkspace } from '../../graph/index.js';

export interface ReportRequest {
  /** The report's own id, printed on it so a filed copy can be traced. */
  reportId?: string | null;
  framework: string | null;
  assetGroupId: string | null;
}

/** One row of the findings section (active findings: open and not covered by a risk acceptance). */
export interface ReportFinding {
  id: string;
  severity: string;
  title: string;
  rule_id: string;
  framework: string;
  control_id: string;
  resource_id: string;
  resource_type: string;
  resource_name: string;
  region: string;
  account_id: string;
  first_seen: Date;
  last_seen: Date;
  remediation: string;
}

export interface ReportFramework extends ControlCounts {
  id: string;
  name: string;
  score: number;
}

export interface ReportSummary {
  report_id: string | null;
  title: string;
  generated_at: string;
  tenant: { id: string; name: string };
  workspace: { id: string; name: string };
  scope: { asset_group: { id: string; name: string; resources: number } | null; resources: number };
  /** Per selected framework: the score and the counts of /controls/status (they add up to applicable_controls). */
  frameworks: ReportFramework[];
  overall_score: number;
  findings_by_severity: Record<string, number>;
  total_findings: number;
  /** Every failing control of the selected frameworks, worst first: as many as the frameworks' failing_controls add up to. */
  failing_controls: Array<{ framework: string; control_id: string; title: string | null; findings: number; top_severity: string }>;
  /** Every unknown control: no finding, but a rule could not judge one of its resources. */
  unknown_controls: Array<{ framework: string; control_id: string; title: string | null; evaluations: number }>;
  /** The scores at the start of each past audit run, then now (empty for an asset group: scores are kept per workspace). */
  score_history: Array<{ at: string; overall: number; frameworks: Record<string, number> }>;
  method: ReportMethod;
}

const RANK_TO_SEVERITY = (rank: number) => SEVERITIES[5 - rank] ?? 'INFO';

/** How many past audit runs the score history shows. */
export const SCORE_HISTORY_RUNS = 60;

/**
 * Reads what a compliance report shows, for the workspace or one asset group of it. Every control
 * number comes from controlStatuses (the function /controls/status reads) and every finding count
 * from activeFindingCounts (the one /controls/status's by_severity comes from), so a report and the
 * API cannot disagree; within an asset group both count only the group's resources. Findings
 * themselves are read page by page by `findings()`, so a report of any size is written without
 * holding them all.
 */
export async function collectReport(db: Kysely<Database>, scope: Scope, now: Date, request: ReportRequest) {
  const [tenant, workspace] = await Promise.all([
    db.selectFrom('tenants').select(['id', 'name']).where('id', '=', scope.tenantId).executeTakeFirstOrThrow(),
    db.selectFrom('workspaces').select(['id', 'name']).where('id', '=', scope.workspaceId).executeTakeFirstOrThrow(),
  ]);
  const enabled = await enabledFrameworks(db, scope.tenantId);
  const selected: FrameworkId[] = request.framework ? [request.framework as FrameworkId] : enabled;

  let group: ReportSummary['scope']['asset_group'] = null;
  let resources: ResourceFilter | undefined;
  if (request.assetGroupId) {
    const row = await assetGroupName(db, scope, request.assetGroupId);
    if (!row) throw new Error('the asset group of this report no longer exists');
    const predicate = await assetGroupPredicate(db, scope, request.assetGroupId, 'n');
    resources = (id) => sql<boolean>`EXISTS (SELECT 1 FROM ${nodesInWorkspace(scope)} n WHERE n.id = ${id} AND ${predicate})`;
    group = { id: row.id, name: row.name, resources: await countNodesMatching(db, scope, predicate) };
  }
  const resourceCount = group ? group.resources : await countNodes(db, scope);

  const rules = await allRules(db, scope.tenantId);
  const { controls } = await controlStatuses(db, scope, enabled, rules, now, { resources });
  const ofSelected = controls.filter((c) => (selected as string[]).includes(c.framework));

  const frameworkRows: ReportFramework[] = selected.map((id) => ({
    id,
    name: catalogs().get(id)?.name ?? id,
    score: 0,
    ...countControls(ofSelected.filter((c) => c.framework === id)),
  }));
  // The score of controlState's formula: passing / applicable, per framework and over the selection.
  for (const f of frameworkRows) f.score = f.applicable_controls === 0 ? 100 : Math.round((100 * f.passing_controls) / f.applicable_controls);
  const passingAll = frameworkRows.reduce((n, f) => n + f.passing_controls, 0);
  const applicableAll = frameworkRows.reduce((n, f) => n + f.applicable_controls, 0);
  // Over every enabled framework this is controlState's overall score; over one, that framework's.
  const overall = applicableAll === 0 ? 100 : Math.round((100 * passingAll) / applicableAll);

  const activeFindings = await activeFindingsTable(db, scope, now, { framework: request.framework, resources });
  const counts = await activeFindingCounts(db, scope, now, { framework: request.framework, resources });
  // Findings per failing control (count and worst severity), for the failing-controls list.
  const perControl = new Map((await findingsByControl(db, await activeFindingsWhere(db, scope, now, { resources }))).map((r) => [controlKey(r.framework, r.control_id), r]));
  const failingControls = ofSelected
    .filter((c) => c.automated_state === 'failing')
    .map((c) => {
      const hit = perControl.get(controlKey(c.framework, c.control_id));
      return { framework: c.framework, control_id: c.control_id, title: controlTitle(c.framework, c.control_id), findings: hit?.findings ?? 0, top: hit?.top ?? 0 };
    })
    .sort(
      (a, b) =>
        selected.indexOf(a.framework) - selected.indexOf(b.framework) ||
        b.top - a.top ||
        b.findings - a.findings ||
        a.control_id.localeCompare(b.control_id, 'en', { numeric: true }),
    )
    .map(({ top, ...c }) => ({ ...c, top_severity: RANK_TO_SEVERITY(top) }));
  const unknownControls = ofSelected
    .filter((c) => c.automated_state === 'unknown')
    .map((c) => ({ framework: c.framework, control_id: c.control_id, title: controlTitle(c.framework, c.control_id), evaluations: c.unknown_evaluations }));

  const scoreHistory = group ? [] : await scoreHistoryOf(db, scope, selected, now, { overall, frameworks: Object.fromEntries(frameworkRows.map((f) => [f.id, f.score])) });

  const summary: ReportSummary = {
    report_id: request.reportId ?? null,
    title: `Compliance report${request.framework ? ` (${catalogs().get(request.framework as FrameworkId)?.name ?? request.framework})` : ''}`,
    generated_at: now.toISOString(),
    tenant,
    workspace,
    scope: { asset_group: group, resources: resourceCount },
    frameworks: frameworkRows,
    overall_score: overall,
    findings_by_severity: counts.bySeverity,
    total_findings: counts.total,
    failing_controls: failingControls,
    unknown_controls: unknownControls,
    score_history: scoreHistory,
    method: await collectMethod(db, scope, { selected, rules, controls: ofSelected, resources, now }),
  };

  /** The findings in report order (most severe first), a page at a time (keyset: rank, then id). */
  async function* findings(pageSize = 1000): AsyncGenerator<ReportFinding[]> {
    let after: { rank: number; id: string } | null = null;
    for (;;) {
      const cursor: { rank: number; id: string } | null = after;
      const rows: { rows: Array<ReportFinding & { severity_rank: number }> } = await sql<ReportFinding & { severity_rank: number }>`
        SELECT f.id, f.severity, f.severity_rank, f.title, f.rule_id, f.framework, f.control_id, f.resource_id, f.resource_type,
          f.resource_name, f.region, f.account_id, f.first_seen, f.last_seen, f.remediation
        FROM ${activeFindings} f
        ${cursor ? sql`WHERE f.severity_rank < ${cursor.rank} OR (f.severity_rank = ${cursor.rank} AND f.id > ${cursor.id})` : sql``}
        ORDER BY f.severity_rank DESC, f.id
        LIMIT ${pageSize}`.execute(db);
      if (rows.rows.length) yield rows.rows.map(({ severity_rank: _rank, ...f }: ReportFinding & { severity_rank: number }) => f);
      if (rows.rows.length < pageSize) return;
      const last: ReportFinding & { severity_rank: number } = rows.rows[rows.rows.length - 1]!;
      after = { rank: last.severity_rank, id: last.id };
    }
  }

  return { summary, findings };
}

/**
 * The scores each past audit run started from (stored with the run as its baseline), oldest first,
 * then the scores now. An audit run's baseline is the state just before its findings changed: the
 * series is the score as it stood between audits.
 */
async function scoreHistoryOf(
  db: Kysely<Database>,
  scope: Scope,
  selected: FrameworkId[],
  now: Date,
  current: { overall: number; frameworks: Record<string, number> },
): Promise<ReportSummary['score_history']> {
  const runs = await auditBaselines(db, scope, SCORE_HISTORY_RUNS);
  const points: ReportSummary['score_history'] = [];
  for (const run of runs.reverse()) {
    const baseline = run.baseline as { scores?: Record<string, number>; overall?: number } | null;
    if (!baseline?.scores) continue;
    const frameworks = Object.fromEntries(selected.filter((f) => baseline.scores![f] !== undefined).map((f) => [f, baseline.scores![f]!]));
    // A single framework's report follows that framework's score.
    const overall = selected.length === 1 ? frameworks[selected[0]!] : baseline.overall;
    // A run started at this very moment has the current state as its baseline: "now" stands for it.
    if (overall === undefined || new Date(run.started_at!).getTime() >= now.getTime()) continue;
    points.push({ at: new Date(run.started_at!).toISOString(), overall, frameworks });
  }
  points.push({ at: now.toISOString(), ...current });
  return points;
}

export type ReportContent = Awaited<ReturnType<typeof collectReport>>;
