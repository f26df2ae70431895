import type { AppDeps } from '../../deps.js';
import type { Scope } from '../../platform/db/scope.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { controlTitle, unknownFramework } from '../compliance/index.js';
import { CONTROL_STATUSES, computeControls, expiryMarks, type ControlStatus } from './control-status.js';
import { MAPPING_FRAMEWORKS } from './questions.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

export interface AttestationFilter {
  framework?: string;
  status?: ControlStatus;
  expiring_soon?: boolean;
}

/**
 * GET /controls/attestations: the attestation status of every control a published questionnaire of
 * the workspace maps to (any framework, scored or not), computed at the moment of the request (an attestation is not_assessed from the
 * instant it expires), with the expiry marks of the reminder stages.
 */
export function createAttestationService(deps: Deps) {
  const db = deps.database.db;
  return {
    async list(scope: Scope, filter: AttestationFilter, page: PageRequest) {
      if (filter.framework && !(MAPPING_FRAMEWORKS as readonly string[]).includes(filter.framework)) {
        throw unknownFramework(filter.framework, MAPPING_FRAMEWORKS);
      }
      const now = deps.clock.now();
      const computed = [...(await computeControls(db, scope, null, now)).values()].sort(
        (a, b) => a.framework.localeCompare(b.framework) || a.control_id.localeCompare(b.control_id, 'en', { numeric: true }),
      );
      const questionnaireIds = [...new Set(computed.map((c) => c.questionnaire_id).filter((id): id is string => !!id))];
      const reminders = await remindersSent(
        db,
        computed.map((c) => c.assessment_id),
      );
      const titles = new Map(
        questionnaireIds.length ? (await db.selectFrom('questionnaires').select(['id', 'title']).where('id', 'in', questionnaireIds).execute()).map((q) => [q.id, q.title]) : [],
      );
      const all = computed.map((c) => ({
        framework: c.framework,
        control_id: c.control_id,
        title: controlTitle(c.framework, c.control_id) ?? c.control_id,
        status: c.status,
        assessment_id: c.assessment_id,
        questionnaire_id: c.questionnaire_id,
        questionnaire_title: c.questionnaire_id ? (titles.get(c.questionnaire_id) ?? null) : null,
        attested_at: c.attested_at,
        expires_at: c.expires_at,
        ...expiryMarks(c.status, c.expires_at, now),
        reminder_sent_days: c.status === 'attested' && c.assessment_id ? (reminders.get(c.assessment_id) ?? null) : null,
      }));
      const counts = Object.fromEntries(CONTROL_STATUSES.map((s) => [s, all.filter((c) => c.status === s).length])) as Record<ControlStatus, number>;
      const selected = all.filter(
        (c) =>
          (!filter.framework || c.framework === filter.framework) &&
          (!filter.status || c.status === filter.status) &&
          (filter.expiring_soon === undefined || c.expiring_soon === filter.expiring_soon),
      );
      const start = offsetOf(page);
      return {
        ...toPage(selected.slice(start, start + page.perPage), selected.length, page),
        counts: { ...counts, expiring_soon: all.filter((c) => c.expiring_soon).length },
      };
    },
  };
}

/**
 * The most urgent expiry reminder (60, 30 or 7 days before) the reminder job sent for each attesting
 * assessment: reminder_stage is its claim, reset by a renewal's approval.
 */
async function remindersSent(db: Deps['database']['db'], assessmentIds: (string | null)[]): Promise<Map<string, number>> {
  const ids = [...new Set(assessmentIds.filter((id): id is string => !!id))];
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('assessments').select(['id', 'reminder_stage']).where('id', 'in', ids).where('reminder_stage', 'is not', null).execute();
  return new Map(rows.map((r) => [r.id, r.reminder_stage!]));
}
