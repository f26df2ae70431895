/**
 * The configuration fields of each integration type, as the service checks them
 * (src/modules/integrations/config.ts; the createIntegration description in the OpenAPI document).
 * `key` is the field's dotted path in `config`; secret fields are write-only: the service never shows
 * them back (a secret URL only by its origin), so the form leaves them empty and keeps the stored value
 * unless a new one is typed.
 */
export type FieldKind = 'text' | 'url' | 'secret' | 'list' | 'number' | 'boolean' | 'select' | 'headers';

export interface FieldDef {
  key: string;
  kind: FieldKind;
  required?: boolean;
  options?: readonly string[];
  /** The service's default, shown as the placeholder (an empty field takes it). */
  placeholder?: string;
  min?: number;
  max?: number;
}

export const INTEGRATION_KINDS = ['webhook', 'slack', 'teams', 'email', 'pagerduty', 'jira', 'github'] as const;
export type IntegrationKind = (typeof INTEGRATION_KINDS)[number];

export const KIND_FIELDS: Record<IntegrationKind, readonly FieldDef[]> = {
  webhook: [
    { key: 'url', kind: 'url', required: true, placeholder: 'https://' },
    { key: 'secret', kind: 'secret', required: true },
    { key: 'headers', kind: 'headers' },
  ],
  slack: [{ key: 'url', kind: 'secret', required: true, placeholder: 'https://hooks.slack.com/services/…' }],
  teams: [
    { key: 'url', kind: 'secret', required: true, placeholder: 'https://' },
    { key: 'format', kind: 'select', options: ['adaptive_card', 'message_card'], placeholder: 'adaptive_card' },
  ],
  email: [
    { key: 'to', kind: 'list', required: true },
    { key: 'cc', kind: 'list' },
    { key: 'subject_prefix', kind: 'text', placeholder: '[ControlGraph]' },
  ],
  pagerduty: [
    { key: 'routing_key', kind: 'secret', required: true },
    { key: 'events_url', kind: 'url', placeholder: 'https://events.pagerduty.com/v2/enqueue' },
    { key: 'source', kind: 'text', placeholder: 'controlgraph' },
    { key: 'resolve_on_finding_resolved', kind: 'boolean' },
  ],
  jira: [
    { key: 'base_url', kind: 'url', required: true, placeholder: 'https://your-site.atlassian.net' },
    { key: 'project_key', kind: 'text', required: true, placeholder: 'SEC' },
    { key: 'issue_type', kind: 'text', placeholder: 'Task' },
    { key: 'api_version', kind: 'select', options: ['3', '2'], placeholder: '3' },
    { key: 'email', kind: 'text' },
    { key: 'api_token', kind: 'secret', required: true },
    { key: 'labels', kind: 'list', placeholder: 'controlgraph' },
  ],
  github: [
    { key: 'repository', kind: 'text', required: true, placeholder: 'owner/repo' },
    { key: 'token', kind: 'secret', required: true },
    { key: 'api_url', kind: 'url', placeholder: 'https://api.github.com' },
    { key: 'labels', kind: 'list', placeholder: 'controlgraph' },
  ],
};

/** E-mail's own SMTP server (optional: without it the service's server sends). */
export const SMTP_FIELDS: readonly FieldDef[] = [
  { key: 'smtp.host', kind: 'text', required: true },
  { key: 'smtp.port', kind: 'number', min: 1, max: 65535, placeholder: '587' },
  { key: 'smtp.secure', kind: 'boolean' },
  { key: 'smtp.username', kind: 'text' },
  { key: 'smtp.password', kind: 'secret' },
  { key: 'smtp.from', kind: 'text', required: true },
];

/** Fields every type has: what it receives and which of it. */
export const COMMON_FIELDS: readonly FieldDef[] = [
  { key: 'events', kind: 'list', required: true },
  { key: 'filters.severity', kind: 'list', options: ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] },
  { key: 'filters.frameworks', kind: 'list' },
  { key: 'filters.resource_types', kind: 'list' },
  { key: 'timeout_seconds', kind: 'number', min: 1, max: 120, placeholder: '30' },
];

/**
 * Suggestions for `events`: the service's catalog (src/modules/integrations/catalog.ts) decides, and
 * names the known ones when it refuses one.
 */
export const EVENT_SUGGESTIONS = [
  'finding.created',
  'finding.resolved',
  'finding.severity_changed',
  'finding.risk_accepted',
  'finding.risk_acceptance_ended',
  'finding.reopened',
  'finding.sla_breached',
  'job.completed',
  'job.failed',
  'schedule.run_finished',
  'report.generated',
  'report.failed',
  'compliance.score_changed',
  'compliance.control_failed',
  'compliance.control_passed',
  'assessment.submitted',
  'attestation.expiring',
  'attestation.expired',
];

/** The field a refusal of the service is about: its messages start with the path (`config.smtp.host is required`). */
export function fieldOfMessage(message: string, keys: readonly string[]): string | null {
  const match = /^config\.([A-Za-z0-9_.-]+)/.exec(message);
  const path = match?.[1];
  if (!path) return null;
  // The longest known key the path starts with (config.filters.severity[0] → filters.severity).
  const found = keys.filter((key) => path === key || path.startsWith(`${key}.`)).sort((a, b) => b.length - a.length)[0];
  return found ?? null;
}
