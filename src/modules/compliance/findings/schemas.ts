import { Type } from 'typebox';
import { AnyObject, Nullable, Paged, StringEnum, Timestamp, Uuid, PageNumber } from '../../../platform/http/schemas.js';
import { FrameworkMappingSchema, SeverityName } from '../schemas.js';
import { FINDING_SORTS } from './findings-repo.js';

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
});

const sortPattern = `^-?(${FINDING_SORTS.join('|')})$`;
const pageFields = {
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
};
const filterFields = {
  framework: Type.Optional(Type.String({ maxLength: 50 })),
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
  sort: Type.Optional(Type.String({ pattern: sortPattern, description: `${FINDING_SORTS.join(', ')}; prefix - for descending (default -severity)` })),
  ...pageFields,
});

export const ScoredQuery = Type.Object({
  ...filterFields,
  min_score: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  ...pageFields,
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

export const ControlsQuery = Type.Object({ framework: Type.Optional(Type.String({ maxLength: 50 })) });
export const ControlsStatus = Type.Object({
  overall_score: Type.Integer(),
  total_findings: Type.Integer(),
  by_severity: Type.Record(Type.String(), Type.Integer()),
  by_framework: Type.Record(Type.String(), Type.Object({ score: Type.Integer(), findings: Type.Integer() })),
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
});
export const GapsQuery = Type.Object({ framework: Type.Optional(Type.String({ maxLength: 50 })), ...pageFields });
export const ControlGap = Type.Object({
  framework: Type.String(),
  control_id: Type.String(),
  title: Type.String(),
  family: Type.String(),
  status: StringEnum(['failing', 'not_attested'] as const),
  findings: Type.Integer(),
  max_severity: Nullable(SeverityName),
  automated: Type.Boolean(),
  attestation_status: Type.String(),
  attestation_expires_at: Nullable(Timestamp),
});

export { Paged };
