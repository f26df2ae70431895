/**
 * What integrations exist, which events they can subscribe to, and which configuration fields are
 * secret (sealed at rest, never returned after creation).
 */
export const INTEGRATION_TYPES = ['webhook', 'email', 'slack', 'teams', 'jira', 'github', 'pagerduty'] as const;
export type IntegrationType = (typeof INTEGRATION_TYPES)[number];

/**
 * Event types an integration may subscribe to: the spec's table, plus the ones the service emits
 * beyond it. A module that adds an event type adds it here so integrations can subscribe.
 */
export const EVENT_TYPES = [
  'finding.created',
  'finding.resolved',
  'finding.severity_changed',
  'finding.risk_accepted',
  'finding.risk_acceptance_ended',
  'finding.reopened',
  'finding.sla_breached',
  'job.created',
  'job.started',
  'job.completed',
  'job.failed',
  'job.cancelled',
  'schedule.run_finished',
  'report.generated',
  'report.failed',
  'report.scheduled',
  'compliance.score_changed',
  'compliance.control_failed',
  'compliance.control_passed',
  'compliance.rule_suspended',
  'assessment.assigned',
  'assessment.submitted',
  'assessment.approved',
  'assessment.changes_requested',
  'attestation.expiring',
  'attestation.expired',
] as const;

/** The synthetic event of POST /integrations/{id}/test; never written to the outbox. */
export const TEST_EVENT = 'integration.test';

export const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;

/** Secret fields per type, as dotted paths into config. */
export const SECRET_FIELDS: Record<IntegrationType, readonly string[]> = {
  webhook: ['secret', 'headers'],
  email: ['smtp.password'],
  slack: ['url'],
  teams: ['url'],
  jira: ['api_token'],
  github: ['token'],
  pagerduty: ['routing_key'],
};

/** Fields holding a URL the service sends requests to (checked by the outbound guard, src/platform/outbound). */
export const TARGET_URL_FIELDS: Record<IntegrationType, readonly string[]> = {
  webhook: ['url'],
  email: [],
  slack: ['url'],
  teams: ['url'],
  jira: ['base_url'],
  github: ['api_url'],
  pagerduty: ['events_url'],
};

export const DEFAULT_TIMEOUT_SECONDS = 30;
export const MAX_TIMEOUT_SECONDS = 120;
export const DEFAULT_GITHUB_API = 'https://api.github.com';
export const DEFAULT_PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';
