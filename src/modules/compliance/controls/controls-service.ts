import type { AppDeps } from '../../../deps.js';
import type { Scope } from '../../../platform/db/scope.js';
import { badRequest } from '../../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../../platform/http/pagination.js';
import { frameworks, requireFrameworkId } from '../frameworks.js';
import { allRules } from '../rule-catalog.js';
import { enabledFrameworks } from '../settings-service.js';
import { SEVERITIES, type FrameworkId } from '../rules/rule-types.js';
import { controlKey } from './control-state.js';
import { activeRollup, unknownRollupTotals } from '../rollups/active-rollup.js';
import { countsByControl, countsByFramework, countsBySeverity } from '../rollups/rollup-counts.js';
import {
  ATTESTATION_STATUSES,
  controlStatuses,
  countControls,
  type AttestationStatus,
  type AutomatedState,
  type ControlCounts,
  type ControlStatusEntry,
} from './control-statuses.js';
import { slaCounts } from '../sla/sla-filter.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

export interface ControlsFilter {
  framework?: string;
  /** Attestation status. */
  status?: AttestationStatus;
  automated_state?: AutomatedState;
}

/** The catalog's current controls that are not applicable: nothing covers them, so they are not assessed. */
function notAssessed(framework: FrameworkId, applicable: ReadonlySet<string> | undefined): number {
  let n = 0;
  for (const control of frameworks().get(framework)!.controls.values()) if (!control.withdrawn && !applicable?.has(control.id)) n++;
  return n;
}

export function createControlsService(deps: Deps) {
  const db = deps.database.db;

  async function frameworksFor(scope: Scope, framework: string | undefined): Promise<{ enabled: FrameworkId[]; selected: FrameworkId[] }> {
    const enabled = await enabledFrameworks(db, scope.tenantId);
    if (framework === undefined) return { enabled, selected: enabled };
    const id = requireFrameworkId(framework);
    if (!enabled.includes(id)) throw badRequest(`framework "${id}" is disabled for this tenant`);
    return { enabled, selected: [id] };
  }

  /** Active findings per (framework, control): the finding's own control and its mappings (from the read model). */
  async function activeByControl(scope: Scope, now: Date) {
    const rows = countsByControl(await activeRollup(db, scope, now));
    return new Map(rows.map((r) => [controlKey(r.framework, r.control_id), r]));
  }

  /** Controls with an attestation record by status (contracts section 5), and those expiring soon. */
  function attestationCounts(controls: ControlStatusEntry[]) {
    const counts = { ...(Object.fromEntries(ATTESTATION_STATUSES.map((s) => [s, 0])) as Record<AttestationStatus, number>), expiring_soon: 0 };
    for (const control of controls) {
      if (!control.attestation_recorded) continue;
      counts[control.attestation_status]++;
      if (control.expiring_soon) counts.expiring_soon++;
    }
    return counts;
  }

  function present({ attestation_recorded: _recorded, ...control }: ControlStatusEntry) {
    return control;
  }

  return {
    /**
     * overall_score, total_findings, by_severity and by_framework (accepted findings do not count),
     * the attestation counts, and each control's automated state and attestation status, paged.
     */
    async status(scope: Scope, query: ControlsFilter, page: PageRequest) {
      const { framework } = query;
      const now = deps.clock.now();
      const { enabled, selected } = await frameworksFor(scope, framework);
      const { state, controls } = await controlStatuses(db, scope, enabled, await allRules(db, scope.tenantId), now);
      const ofSelected = controls.filter((c) => selected.includes(c.framework));
      const listed = ofSelected.filter((c) => (!query.status || c.attestation_status === query.status) && (!query.automated_state || c.automated_state === query.automated_state));
      const start = offsetOf(page);
      // Every count from the read model: the same definitions as the reports (finding-counts.ts, countControls).
      const active = await activeRollup(db, scope, now);
      const { bySeverity, total } = countsBySeverity(active, framework);
      const perFramework = countsByFramework(active);
      const byFramework: Record<string, { score: number; findings: number; not_assessed_controls: number } & ControlCounts> = {};
      for (const fw of selected) {
        byFramework[fw] = {
          score: state.scores.get(fw) ?? 100,
          findings: perFramework.get(fw) ?? 0,
          ...countControls(ofSelected.filter((c) => c.framework === fw)),
          not_assessed_controls: notAssessed(fw, state.applicable.get(fw)),
        };
      }
      const unknownCounts = await unknownRollupTotals(db, scope);
      return {
        overall_score: framework ? byFramework[framework]!.score : state.overall,
        total_findings: total,
        by_severity: bySeverity,
        by_framework: byFramework,
        unknown: {
          controls: ofSelected.filter((c) => c.automated_state === 'unknown').length,
          evaluations: unknownCounts.evaluations,
          resources: unknownCounts.resources,
        },
        attestations: attestationCounts(ofSelected),
        sla: await slaCounts(db, scope, now, framework),
        controls: toPage(listed.slice(start, start + page.perPage).map(present), listed.length, page),
      };
    },

    /** Applicable controls that do not pass: failing ones, and questionnaire controls not attested. */
    async gaps(scope: Scope, framework: string | undefined, page: PageRequest) {
      const now = deps.clock.now();
      const { enabled, selected } = await frameworksFor(scope, framework);
      const { controls } = await controlStatuses(db, scope, enabled, await allRules(db, scope.tenantId), now);
      const active = await activeByControl(scope, now);
      const gaps = controls
        .filter((c) => !c.passing && selected.includes(c.framework))
        .map((c) => {
          const hit = active.get(controlKey(c.framework, c.control_id));
          return {
            framework: c.framework,
            control_id: c.control_id,
            title: c.title,
            family: c.family,
            status: c.automated_state === 'failing' || c.automated_state === 'unknown' ? c.automated_state : ('not_attested' as const),
            findings: hit?.findings ?? 0,
            unknown_evaluations: c.unknown_evaluations,
            max_severity: hit ? SEVERITIES[5 - hit.top]! : null,
            automated: c.automated_state !== 'not_automated',
            attestation_status: c.attestation_status,
            attestation_expires_at: c.attestation_expires_at,
          };
        });
      const start = offsetOf(page);
      return toPage(gaps.slice(start, start + page.perPage), gaps.length, page);
    },
  };
}
