import { Type, type TSchema } from 'typebox';
import { AnyObject, Nullable, Paged, StringEnum, Timestamp, Uuid, PageNumber } from '../../../platform/http/schemas.js';
import { FrameworkMappingSchema, FrameworkName, SeverityName } from '../schemas.js';
import { FINDING_SORTS } from './sorts.js';
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
    Type.Unsafe<string | Date>({
      ...Timestamp,
      description: 'when the finding last went from resolved back to open (found again by an audit or an agent report); null when it never did. Kept when it is resolved again',
    }),
  ),
  reopen_count: Type.Integer({ minimum: 0, description: 'how many times the finding was reopened' }),
  source: Type.String({ description: "who found it: 'controlgraph' (our rules and agents) or the imported tool ('prowler', 'securityhub', a SARIF tool's name)" }),
  source_check_id: Nullable(Type.String({ description: "an imported finding's check id in its tool (rule_id is '<source>:<check id>')" })),
  source_finding_id: Nullable(Type.String({ description: "the tool's own id of an imported finding" })),
  location: Nullable(
    Type.Object(
      { uri: Type.String(), start_line: Type.Optional(Type.Integer()), end_line: Type.Optional(Type.Integer()) },
      { description: 'where in a file an IaC or code finding is' },
    ),
  ),
  due_at: Nullable(
    Type.Unsafe<string | Date>({
      ...Timestamp,
      description: "when the open finding breaches its SLA (the tenant's window for its severity from when it was opened); null when it is not open or its severity has no SLA",
    }),
  ),
});

const sortPattern = `^-?(${FINDING_SORTS.join('|')})$`;
const pageFields = {
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
};
/** Keyset paging beside page/per_page (findings-cursor.ts). */
const cursorField = {
  cursor: Type.Optional(Type.String({ maxLength: 4096, description: 'the next_cursor of the previous page: the rows after it in the same order (not with page)' })),
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
  source: Type.Optional(Type.String({ maxLength: 100, description: "who found it: controlgraph (our rules and agents) or an imported tool's name (prowler)" })),
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

export { Paged };
