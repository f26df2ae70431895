import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import { activeAt, hasLiveAcceptances } from '../../compliance/findings/accepted.js';
import { controlKey, controlState, findingsByControl } from '../../compliance/controls/control-state.js';
import { controlTitle, frameworks as catalogs } from '../../compliance/frameworks.js';
import { allRules } from '../../compliance/rule-catalog.js';
import { enabledFrameworks } from '../../compliance/settings-service.js';
import { SEVERITIES, type FrameworkId } from '../../compliance/rules/rule-types.js';
import { assetGroupPredicate } from '../../applications/asset-groups.js';
import '../../compliance/tables.js';
import '../../applications/tables.js';

export interface ReportRequest {
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

export interface ReportSummary {
  title: string;
  generated_at: string;
  tenant: { id: string; name: string };
  workspace: { id: string; name: string };
  scope: { asset_group: { id: string; name: string; resources: number } | null; resources: number };
  frameworks: Array<{ id: string; name: string; score: number; applicable_controls: number; failing_controls: number; passing_controls: number }>;
  overall_score: number;
  findings_by_severity: Record<string, number>;
  total_findings: number;
  failing_controls: Array<{ framework: string; control_id: string; title: string | null; findings: number; top_severity: string }>;
}

const RANK_TO_SEVERITY = (rank: number) => SEVERITIES[5 - rank] ?? 'INFO';

/**
 * Reads what a compliance report shows, for the workspace or one asset group of it: per-framework
 * scores (the spec's formula; within an asset group, a control fails only for findings on its
 * members), findings by severity, and failing controls. Findings themselves are read page by page
 * by `reportFindings`, so a report of any size is written without holding them all.
 */
export async function collectReport(db: Kysely<Database>, scope: Scope, now: Date, request: ReportRequest) {
  const [tenant, workspace] = await Promise.all([
    db.selectFrom('tenants').select(['id', 'name']).where('id', '=', scope.tenantId).executeTakeFirstOrThrow(),
    db.selectFrom('workspaces').select(['id', 'name']).where('id', '=', scope.workspaceId).executeTakeFirstOrThrow(),
  ]);
  const enabled = await enabledFrameworks(db, scope.tenantId);
  const selected: FrameworkId[] = request.framework ? [request.framework as FrameworkId] : enabled;
  const live = await hasLiveAcceptances(db, scope.workspaceId, now);

  let group: ReportSummary['scope']['asset_group'] = null;
  let inScope: RawBuilder<boolean> = sql<boolean>`true`;
  if (request.assetGroupId) {
    const row = await db.selectFrom('asset_groups').select(['id', 'name']).where('id', '=', request.assetGroupId).where('workspace_id', '=', scope.workspaceId).executeTakeFirst();
    if (!row) throw new Error('the asset group of this report no longer exists');
    const predicate = await assetGroupPredicate(db, scope, request.assetGroupId, 'n');
    inScope = sql<boolean>`EXISTS (SELECT 1 FROM nodes n WHERE n.workspace_id = f.workspace_id AND n.id = f.resource_id AND ${predicate})`;
    const members = await db.selectFrom('nodes as n').select((eb) => eb.fn.countAll<number>().as('c')).where('n.workspace_id', '=', scope.workspaceId).where(predicate).executeTakeFirstOrThrow();
    group = { id: row.id, name: row.name, resources: Number(members.c) };
  }
  const resources = group
    ? group.resources
    : Number((await db.selectFrom('nodes').select((eb) => eb.fn.countAll<number>().as('c')).where('workspace_id', '=', scope.workspaceId).executeTakeFirstOrThrow()).c);

  const frameworkFilter = request.framework
    ? sql<boolean>`(f.framework = ${request.framework} OR f.framework_mappings @> ${JSON.stringify([{ framework: request.framework }])}::jsonb)`
    : sql<boolean>`true`;
  const where = sql<boolean>`f.workspace_id = ${scope.workspaceId} AND ${activeAt('f', now, live)} AND ${inScope}`;

  const state = await controlState(db, scope, enabled, await allRules(db, scope.tenantId), now);
  // Controls failing within the scope (for the whole workspace this equals state.failing).
  const failingRows = await findingsByControl(db, where);
  const failing = new Set(failingRows.map((r) => controlKey(r.framework, r.control_id)));

  const frameworkRows: ReportSummary['frameworks'] = [];
  let passingAll = 0;
  let applicableAll = 0;
  for (const id of selected) {
    const controls = state.applicable.get(id) ?? new Set<string>();
    let passing = 0;
    let failingCount = 0;
    for (const control of controls) {
      const key = controlKey(id, control);
      if (failing.has(key)) failingCount++;
      else if (state.automated.has(key) || state.attested.has(key)) passing++;
    }
    passingAll += passing;
    applicableAll += controls.size;
    frameworkRows.push({
      id,
      name: catalogs().get(id)?.name ?? id,
      score: controls.size === 0 ? 100 : Math.round((100 * passing) / controls.size),
      applicable_controls: controls.size,
      failing_controls: failingCount,
      passing_controls: passing,
    });
  }

  const severities = await sql<{ severity: string; n: number }>`
    SELECT f.severity, count(*)::int AS n FROM findings f WHERE ${where} AND ${frameworkFilter} GROUP BY f.severity`.execute(db);
  const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<string, number>;
  for (const row of severities.rows) bySeverity[row.severity] = row.n;

  const summary: ReportSummary = {
    title: `Compliance report${request.framework ? ` (${catalogs().get(request.framework as FrameworkId)?.name ?? request.framework})` : ''}`,
    generated_at: now.toISOString(),
    tenant,
    workspace,
    scope: { asset_group: group, resources },
    frameworks: frameworkRows,
    overall_score: applicableAll === 0 ? 100 : Math.round((100 * passingAll) / applicableAll),
    findings_by_severity: bySeverity,
    total_findings: Object.values(bySeverity).reduce((a, b) => a + b, 0),
    failing_controls: failingRows
      .filter((r) => (selected as string[]).includes(r.framework))
      .sort((a, b) => b.top - a.top || b.findings - a.findings || a.framework.localeCompare(b.framework) || a.control_id.localeCompare(b.control_id))
      .map((r) => ({ framework: r.framework, control_id: r.control_id, title: controlTitle(r.framework, r.control_id), findings: r.findings, top_severity: RANK_TO_SEVERITY(r.top) })),
  };

  /** The findings in report order (most severe first), a page at a time (keyset: rank, then id). */
  async function* findings(pageSize = 1000): AsyncGenerator<ReportFinding[]> {
    let after: { rank: number; id: string } | null = null;
    for (;;) {
      const cursor: { rank: number; id: string } | null = after;
      const rows: { rows: Array<ReportFinding & { severity_rank: number }> } = await sql<ReportFinding & { severity_rank: number }>`
        SELECT f.id, f.severity, f.severity_rank, f.title, f.rule_id, f.framework, f.control_id, f.resource_id, f.resource_type,
          f.resource_name, f.region, f.account_id, f.first_seen, f.last_seen, f.remediation
        FROM findings f
        WHERE ${where} AND ${frameworkFilter}
          ${cursor ? sql`AND (f.severity_rank < ${cursor.rank} OR (f.severity_rank = ${cursor.rank} AND f.id > ${cursor.id}))` : sql``}
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

export type ReportContent = Awaited<ReturnType<typeof collectReport>>;
