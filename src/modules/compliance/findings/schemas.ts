import { Type, type TSchema } from 'typebox';
import { AnyObject, Nullable, Paged, StringEnum, Timestamp, Uuid, PageNumber } from '../../../platform/http/schemas.js';
import { FrameworkMappingSchema, FrameworkName, SeverityName } from '../schemas.js';
import { ATTESTATION_STATUSES, AUTOMATED_STATES } from '../controls/control-statuses.js';
import { FINDING_SORTS } from './findings-repo.js';
import { SLA_FILTERS } from '../sla/sla-filter.js';

export const Finding = Type.Object({
  id: Type.String({ description: '<rule_id>:<resource_id>' }),
  rule_id: Type.String(),
  framework: Type.String(),
  control_id: Type.String(),
  framework_mappings: Type.Array(FrameworkMappingSchema),
  severity: SeverityName,
  base_severity: SeverityName,
  status: StringEnum(['open', 'resolved', 'accepted'] as const),
  title: Type.String(),
  description: Type.String(),
  remediation: Type.String(),
  resource_id: Type.String(),
  resource_type: Type.String(),
  resource_name: Type.String(),
  region: Type.String(),
  account_id: Type.String(),
  cve_ids: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
  details: AnyObject,
  group_id: Type.String(),
  first_seen: Timestamp,
  last_seen: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  resolved_at: Nullable(Timestamp),
  resolved_by: Nullable(Type.String()),
  reopened_at: Nullable(
    Type.Unsafe<string | Date>({ ...Timestamp, description: 'when the finding last went from resolved back to open (found again by an audit or an agent report); null when it never did. Kept when it is resolved again' }),
  ),
  reopen_count: Type.Integer({ minimum: 0, description: 'how many times the finding was reopened' }),
  due_at: Nullable(
    Type.Unsafe<string | Date>({ ...Timestamp, description: 'when the open finding breaches its SLA (the tenant\'s window for its severity from when it was opened); null when it is not open or its severity has no SLA' }),
  ),
});

const sortPattern = `^-?(${FINDING_SORTS.join('|')})$`;
const pageFields = {
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
};
/** Keyset paging beside page/per_page (findings-cursor.ts). */
const cursorField = {
  cursor: Type.Optional(
    Type.String({ maxLength: 4096, description: 'the next_cursor of the previous page: the rows after it in the same order (not with page)' }),
  ),
};

/** The paged envelope of the findings lists with keyset paging: next_cursor, and page null when a cursor was sent. */
export function CursorPaged<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    total: Type.Integer(),
    page: Nullable(Type.Integer({ description: 'null when the page was asked for by cursor' })),
    per_page: Type.Integer(),
    total_pages: Type.Integer(),
    next_cursor: Nullable(Type.String({ description: 'pass as ?cursor= for the next page; null on the last page' })),
  });
}
const filterFields = {
  framework: Type.Optional(FrameworkName),
  severity: Type.Optional(Type.String({ maxLength: 100, description: 'comma-separated from CRITICAL,HIGH,MEDIUM,LOW,INFO' })),
  status: Type.Optional(StringEnum(['open', 'resolved', 'accepted', 'all'] as const, { default: undefined })),
  resource_type: Type.Optional(Type.String({ maxLength: 200 })),
  resource_id: Type.Optional(Type.String({ maxLength: 1000 })),
  control_id: Type.Optional(Type.String({ maxLength: 50 })),
  rule_id: Type.Optional(Type.String({ maxLength: 100 })),
  group_id: Type.Optional(Type.String({ maxLength: 100 })),
  search: Type.Optional(Type.String({ maxLength: 200, description: 'matches title, description or resource id' })),
};

export const FindingListQuery = Type.Object({
  id: Type.Optional(Type.String({ maxLength: 1200, description: 'one finding by id (any status)' })),
  ...filterFields,
  sla: Type.Optional(StringEnum(SLA_FILTERS, { description: 'overdue: open findings past their due_at; due_soon: open findings due within the next 24 hours' })),
  sort: Type.Optional(Type.String({ pattern: sortPattern, description: `${FINDING_SORTS.join(', ')}; prefix - for descending (default -severity)` })),
  ...pageFields,
  ...cursorField,
});

export const ScoredQuery = Type.Object({
  ...filterFields,
  min_score: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  ...pageFields,
  ...cursorField,
});
export const ScoredFinding = Type.Object({
  ...Finding.properties,
  risk_score: Type.Integer({ minimum: 0, maximum: 100 }),
  risk_factors: Type.Object({
    severity: Type.Integer(),
    kev: Type.Integer(),
    epss: Type.Integer(),
    exposure: Type.Integer(),
    criticality: Type.Integer(),
  }),
});

export const GroupedQuery = Type.Object({ ...filterFields, ...pageFields });
export const FindingGroup = Type.Object({
  group_id: Type.String({ description: 'stable across audits while the cause is the same' }),
  label: Type.String({ description: 'the rule title, the cause (or account and region) and the resource count' }),
  cause: Nullable(Type.String({ description: "the shared cause from the rule's group_by, e.g. security group sg-123; null: the group is the rule in one account and region" })),
  rule_id: Type.String(),
  title: Type.String(),
  framework: Type.String(),
  control_id: Type.String(),
  account_id: Type.String(),
  region: Type.String(),
  resource_type: Type.String(),
  severity: SeverityName,
  findings: Type.Integer(),
  resource_ids: Type.Array(Type.String(), { description: 'up to 20, sorted' }),
  first_seen: Timestamp,
  last_seen: Timestamp,
});

export const FindingParams = Type.Object({ tenantID: Uuid, findingID: Type.String({ minLength: 3, maxLength: 1200 }) });
export const ResolveBody = Type.Object({ comment: Type.Optional(Type.String({ maxLength: 2000 })) }, { additionalProperties: false });

export const Remediation = Type.Object({
  finding_id: Type.String(),
  summary: Type.String(),
  steps: Type.Array(Type.Object({ order: Type.Integer(), action: Type.String(), command: Type.String() })),
  terraform_patch_available: Type.Boolean(),
});
export const Patch = Type.Object({
  finding_id: Type.String(),
  patch: Type.String({ description: 'a unified diff (git apply / patch -p1 at the Terraform root)' }),
  path: Type.String({ description: 'the file the patch edits' }),
  strategy: StringEnum(['source', 'generated'] as const),
  base: Nullable(Type.Object({ path: Type.String(), content: Type.String() }, { description: 'generated only: the file to create first' })),
});

const AttestationStatusName = StringEnum(ATTESTATION_STATUSES);
const AttestationExpiry = Nullable(Type.Unsafe<string | Date>({ ...Timestamp, description: 'when the current attestation ends; null unless attested' }));
const AutomatedStateName = StringEnum(AUTOMATED_STATES, {
  description:
    'failing: an active finding maps to the control; unknown: none does, but a rule could not judge one of its resources (an unknown evaluation maps to it: GET /evaluations/unknown); ' +
    'passing: a rule checks it and neither holds; not_automated: no rule checks it',
});

export const ControlsQuery = Type.Object({
  framework: Type.Optional(FrameworkName),
  status: Type.Optional(StringEnum(ATTESTATION_STATUSES, { description: 'controls (the list) with this attestation status' })),
  automated_state: Type.Optional(AutomatedStateName),
  ...pageFields,
});
export const ControlStatusItem = Type.Object({
  framework: FrameworkName,
  control_id: Type.String(),
  title: Type.String(),
  family: Type.String(),
  automated_state: AutomatedStateName,
  unknown_evaluations: Type.Integer({ description: '(rule, resource) evaluations of the control\'s rules whose latest outcome is unknown (0 while it fails)' }),
  attestation_status: AttestationStatusName,
  attestation_expires_at: AttestationExpiry,
  expiring_soon: Type.Boolean({ description: 'attested, and the attestation ends within 7 days' }),
  passing: Type.Boolean({ description: 'counts towards the score: no active finding, no unknown evaluation, and checked by a rule or attested' }),
});
export const ControlsStatus = Type.Object({
  overall_score: Type.Integer(),
  total_findings: Type.Integer(),
  by_severity: Type.Record(Type.String(), Type.Integer()),
  by_framework: Type.Record(
    Type.String(),
    Type.Object({
      score: Type.Integer(),
      findings: Type.Integer(),
      applicable_controls: Type.Integer({ description: 'the controls of the framework that count (the score\'s denominator); the four counts below add up to it' }),
      passing_controls: Type.Integer({ description: 'controls that count towards the score' }),
      failing_controls: Type.Integer({ description: 'controls an active finding maps to' }),
      unknown_controls: Type.Integer({ description: 'controls of the framework whose automated state is unknown' }),
      not_attested_controls: Type.Integer({ description: 'controls no rule checks and no current attestation covers' }),
    }),
  ),
  unknown: Type.Object(
    {
      controls: Type.Integer({ description: 'listed controls whose automated state is unknown' }),
      evaluations: Type.Integer({ description: '(rule, resource) evaluations of the workspace whose latest outcome is unknown' }),
      resources: Type.Integer({ description: 'distinct resources with at least one unknown evaluation' }),
    },
    { description: 'what the rules could not judge (GET /evaluations/unknown lists it); an unknown control does not pass' },
  ),
  attestations: Type.Object(
    {
      not_assessed: Type.Integer(),
      questionnaire_assigned: Type.Integer(),
      in_progress: Type.Integer(),
      submitted: Type.Integer(),
      changes_requested: Type.Integer(),
      attested: Type.Integer(),
      expiring_soon: Type.Integer({ description: 'attested controls whose attestation ends within 7 days' }),
    },
    { description: 'controls with an attestation record (questionnaire controls), by attestation status; an expired attestation counts as not_assessed' },
  ),
  sla: Type.Object(
    {
      overdue: Type.Integer({ description: 'active findings past their due_at' }),
      due_soon: Type.Integer({ description: 'active findings due within the next 24 hours' }),
    },
    { description: 'active findings (of ?framework= when given) by SLA state, as GET /findings?sla= lists them' },
  ),
  controls: Type.Object(Paged(ControlStatusItem).properties, {
    description:
      'every applicable control (mapped by a rule or covered by a published questionnaire) of the enabled frameworks, or of ?framework=, with its automated state and attestation status; paged by page and per_page, filtered by status and automated_state',
  }),
});
export const GapsQuery = Type.Object({ framework: Type.Optional(FrameworkName), ...pageFields });
export const ControlGap = Type.Object({
  framework: Type.String(),
  control_id: Type.String(),
  title: Type.String(),
  family: Type.String(),
  status: StringEnum(['failing', 'unknown', 'not_attested'] as const),
  findings: Type.Integer(),
  unknown_evaluations: Type.Integer({ description: 'evaluations of the control\'s rules whose outcome is unknown (0 while it fails)' }),
  max_severity: Nullable(SeverityName),
  automated: Type.Boolean(),
  attestation_status: AttestationStatusName,
  attestation_expires_at: AttestationExpiry,
});

export { Paged };
