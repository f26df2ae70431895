import { Type } from 'typebox';
import { AnyObject, Nullable, Paged, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { EVENT_TYPES, INTEGRATION_TYPES } from './catalog.js';
import { ALERT_CHANNELS } from './alert-rules.js';

const CONFIG_DESCRIPTION = [
  'Per type (secret fields are returned only in the creation response):',
  '- all types: `events` (required, event types), `filters` {severity, frameworks, resource_types}, `workspaces` (workspace ids; default every workspace of the tenant), `timeout_seconds` (1-120, default 30).',
  '- webhook: `url` (https), `secret` (secret), `headers` (secret values; names shown).',
  '- slack: `url` (incoming webhook URL, secret: shown as its origin).',
  '- teams: `url` (Workflows or connector webhook URL, secret), `format` adaptive_card (default) or message_card.',
  '- jira: `base_url`, `project_key`, `issue_type` (Task), `api_version` 2 or 3 (3), `email` (Cloud: Basic auth with it), `api_token` (secret), `labels`.',
  '- github: `repository` (owner/repo), `token` (secret), `api_url` (https://api.github.com), `labels`.',
  '- pagerduty: `routing_key` (secret), `events_url` (https://events.pagerduty.com/v2/enqueue), `source`, `resolve_on_finding_resolved` (true).',
  '- email: `to`, `cc`, `subject_prefix`, `smtp` {host, port, secure, username, password (secret), from} (default: the service SMTP server).',
].join('\n');

export const IntegrationType = StringEnum(INTEGRATION_TYPES);

export const IntegrationCreate = Type.Object(
  {
    type: Type.String({ maxLength: 50, description: INTEGRATION_TYPES.join(', ') }),
    name: Type.String({ maxLength: 200 }),
    config: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: CONFIG_DESCRIPTION }),
  },
  { additionalProperties: false },
);

export const IntegrationUpdate = Type.Object(
  {
    type: Type.Optional(Type.String({ maxLength: 50, description: 'must equal the current type when given' })),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(StringEnum(['active', 'disabled'] as const, { description: 'active re-enables a disabled integration; disabled stops deliveries' })),
    config: Type.Optional(
      Type.Unsafe<Record<string, unknown>>({
        type: 'object',
        additionalProperties: true,
        description:
          'Fields given replace the current ones (null removes an optional field); fields left out, secrets included, are kept, as are the secrets a nested object given whole leaves out (smtp.password).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const Integration = Type.Object({
  id: Uuid,
  type: IntegrationType,
  name: Type.String(),
  status: StringEnum(['active', 'disabled'] as const),
  source: StringEnum(['integration', 'alert_rule'] as const, { description: 'alert_rule when created through /alerts/rules' }),
  config: AnyObject,
  disabled_at: Nullable(Timestamp),
  disabled_reason: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const IntegrationList = Paged(Integration);

export const IntegrationListQuery = Type.Object(
  {
    type: Type.Optional(IntegrationType),
    status: Type.Optional(StringEnum(['active', 'disabled'] as const)),
    source: Type.Optional(StringEnum(['integration', 'alert_rule'] as const)),
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  },
  { additionalProperties: false },
);

export const Attempt = Type.Object({
  number: Type.Integer({ description: 'counts every attempt of the delivery, redeliveries included' }),
  attempted_at: Timestamp,
  outcome: StringEnum(['succeeded', 'failed'] as const),
  status_code: Nullable(Type.Integer({ description: 'HTTP status, or the SMTP reply code of e-mail' })),
  latency_ms: Nullable(Type.Integer()),
  response_body: Nullable(Type.String({ description: 'the first 1,024 bytes of the response' })),
  error: Nullable(Type.String()),
  next_attempt_at: Nullable(Timestamp),
});

export const Delivery = Type.Object({
  id: Uuid,
  integration_id: Uuid,
  event_id: Uuid,
  event_type: Type.String(),
  workspace_id: Nullable(Uuid),
  status: StringEnum(['pending', 'succeeded', 'failed'] as const),
  attempt_count: Type.Integer(),
  next_attempt_at: Nullable(Timestamp),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Nullable(Timestamp),
  attempts: Type.Array(Attempt),
  envelope: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'the event as sent (single delivery only)' })),
});

export const DeliveryList = Paged(Delivery);

export const DeliveryListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(['pending', 'succeeded', 'failed'] as const)),
    event_type: Type.Optional(Type.String({ maxLength: 100 })),
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  },
  { additionalProperties: false },
);

export const AlertRuleCreate = Type.Object(
  {
    name: Type.String({ maxLength: 200 }),
    channel: Type.String({ maxLength: 50, description: ALERT_CHANNELS.join(', ') }),
    url: Type.String({ maxLength: 2000, description: 'webhook, slack, teams: the URL; email: mailto:<address>[,<address>…]' }),
    events: Type.Array(Type.String({ maxLength: 100 }), { maxItems: EVENT_TYPES.length, description: EVENT_TYPES.join(', ') }),
    secret: Type.Optional(Type.String({ maxLength: 512, description: 'the signing secret (webhook channel, required there)' })),
    filters: Type.Optional(
      Type.Object(
        {
          severity: Type.Optional(Type.Array(Type.String({ maxLength: 20 }))),
          frameworks: Type.Optional(Type.Array(Type.String({ maxLength: 100 }))),
          resource_types: Type.Optional(Type.Array(Type.String({ maxLength: 200 }))),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const AlertRule = Type.Object({
  id: Uuid,
  name: Type.String(),
  channel: Type.String(),
  url: Nullable(Type.String({ description: 'slack and teams URLs are secret: shown as their origin after creation' })),
  events: Type.Array(Type.String()),
  filters: AnyObject,
  status: StringEnum(['active', 'disabled'] as const),
  disabled_reason: Nullable(Type.String()),
  integration_id: Uuid,
  created_at: Timestamp,
  secret: Type.Optional(Type.String({ description: 'creation response only' })),
});

export const AlertRuleList = Paged(AlertRule);

export const IntegrationParams = Type.Object({ tenantID: Uuid, integrationID: Uuid });
export const DeliveryParams = Type.Object({ tenantID: Uuid, integrationID: Uuid, deliveryID: Uuid });
export const RuleParams = Type.Object({ tenantID: Uuid, ruleID: Uuid });
export const PageOnly = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  },
  { additionalProperties: false },
);
