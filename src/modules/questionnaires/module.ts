import type { Module, RoutePlugin } from '../module.js';
import { questionnaireRoutes } from './questionnaire-routes.js';
import { assessmentRoutes } from './assessment-routes.js';
import { evidenceRoutes } from './evidence-routes.js';
import { linkRoutes } from './link-routes.js';
import { respondentRoutes } from './respondent-routes.js';
import { sendExpiryReminders, sweepExpiredAttestations } from './control-status.js';
import { templates } from './templates.js';

export const ATTESTATION_EXPIRY_JOB = 'questionnaires.attestation-expiry';
export const ATTESTATION_REMINDER_JOB = 'questionnaires.attestation-reminders';

const routes: RoutePlugin = async (app, options) => {
  await app.register(questionnaireRoutes, options);
  await app.register(assessmentRoutes, options);
  await app.register(evidenceRoutes, options);
  await app.register(linkRoutes, options);
  await app.register(respondentRoutes, options);
};

/**
 * Questionnaires, assessments, attestations and evidence (issue 10). Attestation expiry is exact on
 * read; the sweeper records it (audit log, attestation.expired) and the reminder job sends the 60,
 * 30 and 7-day reminders (attestation.expiring), each at most once.
 */
export const questionnairesModule: Module = {
  name: 'questionnaires',
  routes,
  jobs: (deps) => [
    { kind: ATTESTATION_EXPIRY_JOB, maxAttempts: 3, run: async () => ({ recorded: await sweepExpiredAttestations(deps) }) },
    { kind: ATTESTATION_REMINDER_JOB, maxAttempts: 3, run: async () => ({ sent: await sendExpiryReminders(deps) }) },
  ],
  schedules: () => [
    { name: 'questionnaires-attestation-expiry', kind: ATTESTATION_EXPIRY_JOB, intervalMs: 60_000 },
    { name: 'questionnaires-attestation-reminders', kind: ATTESTATION_REMINDER_JOB, intervalMs: 15 * 60_000 },
  ],
  // The templates are content: a malformed file stops the start naming it.
  onStart: async () => {
    templates();
  },
};
