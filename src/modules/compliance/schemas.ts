import { Type } from 'typebox';
import { AnyObject, Nullable, StringEnum, Timestamp, Uuid, PageNumber } from '../../platform/http/schemas.js';
import { FRAMEWORKS, SEVERITIES } from './rules/rule-types.js';
import { CAUSE_PATTERN, EDGE_TYPE_PATTERN } from './rules/group-by.js';

export const FrameworkName = StringEnum(FRAMEWORKS);
export const SeverityName = StringEnum(SEVERITIES);
export const TenantParams = Type.Object({ tenantID: Uuid });

export const FrameworkMappingSchema = Type.Object(
  { framework: FrameworkName, control_id: Type.String({ minLength: 1, maxLength: 50 }) },
  { additionalProperties: false },
);
const RemediationSchema = Type.Object(
  {
    summary: Type.String({ minLength: 1, maxLength: 2000 }),
    steps: Type.Array(
      Type.Object(
        {
          order: Type.Optional(Type.Integer({ minimum: 1 })),
          action: Type.String({ minLength: 1, maxLength: 1000 }),
          command: Type.String({ maxLength: 4000 }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 50 },
    ),
  },
  { additionalProperties: false },
);

/** A rule's root cause for finding groups (see rules/rule-types.ts GroupBy); exactly one of self, path, edge. */
export const GroupBySchema = Type.Object(
  {
    cause: Type.String({ pattern: CAUSE_PATTERN, description: 'names the cause in group labels, e.g. security group' }),
    self: Type.Optional(Type.Unsafe<true>({ type: 'boolean', enum: [true], description: 'the resource is its own cause' })),
    path: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_]+(?:\\.[A-Za-z0-9_]+)*$', maxLength: 300, description: 'property path (no properties. prefix, lists unmarked) whose value(s) identify the cause' })),
    edge: Type.Optional(Type.String({ pattern: EDGE_TYPE_PATTERN, maxLength: 100, description: 'edge type (either direction) to the node that is the cause' })),
    node_type: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]*\\.[a-z0-9][a-z0-9_-]*\\.[a-z0-9][a-z0-9_-]*$', maxLength: 200, description: 'with edge: only neighbours of this type' })),
  },
  {
    additionalProperties: false,
    description: 'Root cause of a violation: findings of the rule with the same cause form one group; without it (or when the resource has no value) they group by account and region',
  },
);

export const RuleSchema = Type.Object({
  id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  severity: SeverityName,
  resource_type: Type.String(),
  framework: FrameworkName,
  control_id: Type.String(),
  framework_mappings: Type.Array(FrameworkMappingSchema),
  condition: Type.String({ description: 'CEL over `resource`; true when the resource violates the rule' }),
  remediation: RemediationSchema,
  group_by: Nullable(GroupBySchema),
  builtin: Type.Boolean(),
  terraform_fix_available: Type.Boolean(),
});

export const RULE_ID_PATTERN = '^[a-z0-9][a-z0-9-]{1,99}$';
/** The fields of a custom rule; creation adds its id. */
const ruleFields = {
  title: Type.String({ minLength: 1, maxLength: 300 }),
  description: Type.String({ maxLength: 5000 }),
  severity: SeverityName,
  resource_type: Type.String({ pattern: '^[a-z0-9][a-z0-9-]*\\.[a-z0-9][a-z0-9_-]*\\.[a-z0-9][a-z0-9_-]*$', maxLength: 200 }),
  framework: FrameworkName,
  control_id: Type.String({ minLength: 1, maxLength: 50 }),
  framework_mappings: Type.Optional(Type.Array(FrameworkMappingSchema, { maxItems: 100 })),
  condition: Type.String({ minLength: 1, maxLength: 10_000 }),
  remediation: RemediationSchema,
  group_by: Type.Optional(Nullable(GroupBySchema)),
};
export const RuleInput = Type.Object(
  { id: Type.String({ pattern: RULE_ID_PATTERN, description: 'lower case, digits and dashes (no colons)' }), ...ruleFields },
  { additionalProperties: false },
);
export const RuleUpdate = Type.Object(ruleFields, { additionalProperties: false });
export const RuleParams = Type.Object({ tenantID: Uuid, ruleID: Type.String({ minLength: 1, maxLength: 100 }) });
export const RuleListQuery = Type.Object({
  framework: Type.Optional(FrameworkName),
  resource_type: Type.Optional(Type.String({ maxLength: 200 })),
  severity: Type.Optional(SeverityName),
  builtin: Type.Optional(Type.Boolean()),
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

export const FrameworkSetting = Type.Object({
  id: FrameworkName,
  name: Type.String(),
  version: Type.String(),
  enabled: Type.Boolean(),
  controls: Type.Integer({ description: 'controls in the catalog' }),
  rules: Type.Integer({ description: 'rules whose failure affects the framework' }),
});
export const ComplianceSettings = Type.Object({ frameworks: Type.Array(FrameworkSetting) });
export const ComplianceSettingsUpdate = Type.Object(
  {
    frameworks: Type.Array(Type.Object({ id: Type.String({ maxLength: 50 }), enabled: Type.Boolean() }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 20,
    }),
  },
  { additionalProperties: false },
);

export const AuditRunBody = Type.Object({ framework: Type.Optional(Type.String({ maxLength: 50 })) }, { additionalProperties: false });
export const AuditRun = Type.Object({
  job_id: Uuid,
  status: StringEnum(['queued', 'running', 'succeeded', 'failed'] as const),
  frameworks: Type.Array(Type.String()),
  started_at: Timestamp,
  finished_at: Nullable(Timestamp),
  trigger: Type.String(),
  stats: Type.Object({
    resources_evaluated: Type.Integer(),
    rules_evaluated: Type.Integer(),
    evaluations: Type.Integer(),
    evaluation_errors: Type.Integer(),
    findings_created: Type.Integer(),
    findings_resolved: Type.Integer(),
    findings_reopened: Type.Integer(),
    severity_changes: Type.Integer(),
  }),
  error: Nullable(Type.String()),
});
export const RunParams = Type.Object({ tenantID: Uuid, jobID: Uuid });

export { AnyObject };
