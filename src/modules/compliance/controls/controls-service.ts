import { sql } from 'kysely';
import type { AppDeps } from '../../../deps.js';
import type { Scope } from '../../../platform/db/scope.js';
import { badRequest } from '../../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../../platform/http/pagination.js';
import { activeAt, hasLiveAcceptances } from '../findings/accepted.js';
import { frameworks, isFrameworkId } from '../frameworks.js';
import { allRules } from '../rule-catalog.js';
import { enabledFrameworks } from '../settings-service.js';
import { SEVERITIES, type FrameworkId } from '../rules/rule-types.js';
import { controlKey, controlState, EXPIRING_SOON_DAYS, findingsByControl } from './control-state.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

/** An attestation ending within this window is reported as expiring soon. */
const EXPIRING_SOON_MS = EXPIRING_SOON_DAYS * 86_400_000;

export function createControlsService(deps: Deps) {
  const db = deps.database.db;

  async function frameworksFor(scope: Scope, framework: string | undefined): Promise<{ enabled: FrameworkId[]; selected: FrameworkId[] }> {
    const enabled = await enabledFrameworks(db, scope.tenantId);
    if (framework === undefined) return { enabled, selected: enabled };
    if (!isFrameworkId(framework)) throw badRequest(`unknown framework "${framework}"`);
    if (!enabled.includes(framework)) throw badRequest(`framework "${framework}" is disabled for this tenant`);
    return { enabled, selected: [framework] };
  }

  /** Active findings per (framework, control): the finding's own control and its mappings. */
  async function activeByControl(scope: Scope, now: Date) {
    const live = await hasLiveAcceptances(db, scope.workspaceId, now);
    const rows = await findingsByControl(db, sql<boolean>`f.workspace_id = ${scope.workspaceId} AND ${activeAt('f', now, live)}`);
    return new Map(rows.map((r) => [controlKey(r.framework, r.control_id), r]));
  }

  /** Controls with an attestation record by status (contracts section 5), and those expiring soon. */
  async function attestationSummary(scope: Scope, selected: FrameworkId[], now: Date) {
    const soon = new Date(now.getTime() + EXPIRING_SOON_MS);
    const rows = await db
      .selectFrom('control_attestations')
      .select(['status', 'expires_at'])
      .where('workspace_id', '=', scope.workspaceId)
      .where('tenant_id', '=', scope.tenantId)
      .where('framework', 'in', selected.length ? selected : [''])
      .execute();
    const summary = { not_assessed: 0, questionnaire_assigned: 0, in_progress: 0, submitted: 0, changes_requested: 0, attested: 0, expiring_soon: 0 };
    for (const row of rows) {
      const expired = row.status === 'attested' && row.expires_at !== null && new Date(row.expires_at) <= now;
      summary[expired ? 'not_assessed' : row.status]++;
      if (row.status === 'attested' && !expired && row.expires_at !== null && new Date(row.expires_at) <= soon) summary.expiring_soon++;
    }
    return summary;
  }

  return {
    /** overall_score, total_findings, by_severity and by_framework; accepted findings do not count. */
    async status(scope: Scope, framework?: string) {
      const now = deps.clock.now();
      const { enabled, selected } = await frameworksFor(scope, framework);
      const state = await controlState(db, scope, enabled, await allRules(db, scope.tenantId), now);
      const live = await hasLiveAcceptances(db, scope.workspaceId, now);
      const counts = await sql<{ severity: string; framework: string; n: number }>`
        SELECT f.severity, x.framework, count(*)::int AS n
        FROM findings f
        CROSS JOIN LATERAL (
          SELECT f.framework AS framework
          UNION
          SELECT m->>'framework' FROM jsonb_array_elements(f.framework_mappings) m
        ) x
        WHERE f.workspace_id = ${scope.workspaceId} AND ${activeAt('f', now, live)}
        GROUP BY f.severity, x.framework`.execute(db);
      const totals = await sql<{ severity: string; n: number }>`
        SELECT f.severity, count(*)::int AS n FROM findings f
        WHERE f.workspace_id = ${scope.workspaceId} AND ${activeAt('f', now, live)}
          ${framework ? sql`AND (f.framework = ${framework} OR f.framework_mappings @> ${JSON.stringify([{ framework }])}::jsonb)` : sql``}
        GROUP BY f.severity`.execute(db);
      const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<string, number>;
      for (const row of totals.rows) bySeverity[row.severity] = row.n;
      const byFramework: Record<string, { score: number; findings: number }> = {};
      for (const fw of selected) {
        const findings = counts.rows.filter((r) => r.framework === fw).reduce((n, r) => n + r.n, 0);
        byFramework[fw] = { score: state.scores.get(fw) ?? 100, findings };
      }
      return {
        overall_score: framework ? byFramework[framework]!.score : state.overall,
        total_findings: Object.values(bySeverity).reduce((a, b) => a + b, 0),
        by_severity: bySeverity,
        by_framework: byFramework,
        attestations: await attestationSummary(scope, selected, now),
      };
    },

    /** Applicable controls that do not pass: failing ones, and questionnaire controls not attested. */
    async gaps(scope: Scope, framework: string | undefined, page: PageRequest) {
      const now = deps.clock.now();
      const { enabled, selected } = await frameworksFor(scope, framework);
      const state = await controlState(db, scope, enabled, await allRules(db, scope.tenantId), now);
      const active = await activeByControl(scope, now);
      const attestations = new Map(
        (
          await db
            .selectFrom('control_attestations')
            .select(['framework', 'control_id', 'status', 'expires_at'])
            .where('workspace_id', '=', scope.workspaceId)
            .where('tenant_id', '=', scope.tenantId)
            .execute()
        ).map((a) => [controlKey(a.framework, a.control_id), a]),
      );
      const gaps = [];
      for (const fw of selected) {
        const catalog = frameworks().get(fw)!;
        for (const controlId of [...(state.applicable.get(fw) ?? [])].sort()) {
          const key = controlKey(fw, controlId);
          const failing = state.failing.has(key);
          const passing = !failing && (state.automated.has(key) || state.attested.has(key));
          if (passing) continue;
          const attestation = attestations.get(key);
          const hit = active.get(key);
          const attestationStatus = attestation ? (attestation.status === 'attested' && !state.attested.has(key) ? 'not_assessed' : attestation.status) : 'not_assessed';
          const control = catalog.controls.get(controlId);
          gaps.push({
            framework: fw,
            control_id: controlId,
            title: control?.title ?? controlId,
            family: control?.family ?? '',
            status: failing ? ('failing' as const) : ('not_attested' as const),
            findings: hit?.findings ?? 0,
            max_severity: hit ? SEVERITIES[5 - hit.top]! : null,
            automated: state.automated.has(key),
            attestation_status: attestationStatus,
            attestation_expires_at: attestation?.expires_at ?? null,
          });
        }
      }
      const start = offsetOf(page);
      return toPage(gaps.slice(start, start + page.perPage), gaps.length, page);
    },
  };
}
