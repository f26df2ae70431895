import { Type, type Static, type TSchema } from 'typebox';
import { AnyObject, Nullable, StringEnum, Timestamp, Uuid, PageNumber } from '../../platform/http/schemas.js';
import { FINDING_TITLE_MAX, FRAMEWORKS, NIST_SOURCES, SEVERITIES, type Severity } from './rules/rule-types.js';
import { SLA_DEFAULT_HOURS, SLA_MAX_HOURS } from './sla/sla-settings.js';
import { CAUSE_PATTERN, EDGE_TYPE_PATTERN } from './rules/group-by.js';

export const FrameworkName = StringEnum(FRAMEWORKS);
export const SeverityName = StringEnum(SEVERITIES);

export const FrameworkMappingSchema = Type.Object({ framework: FrameworkName, control_id: Type.String({ minLength: 1, maxLength: 50 }) }, { additionalProperties: false });
const RemediationSummary = Type.String({ minLength: 1, maxLength: 2000 });
const RemediationSchema = Type.Object(
  {
    summary: RemediationSummary,
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
    path: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_]+(?:\\.[A-Za-z0-9_]+)*$',
        maxLength: 300,
        description: 'property path (no properties. prefix, lists unmarked) whose value(s) identify the cause',
      }),
    ),
    edge: Type.Optional(Type.String({ pattern: EDGE_TYPE_PATTERN, maxLength: 100, description: 'edge type (either direction) to the node that is the cause' })),
    node_type: Type.Optional(
      Type.String({ pattern: '^[a-z0-9][a-z0-9-]*\\.[a-z0-9][a-z0-9_-]*\\.[a-z0-9][a-z0-9_-]*$', maxLength: 200, description: 'with edge: only neighbours of this type' }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Root cause of a violation: findings of the rule with the same cause form one group; without it (or when the resource has no value) they group by account and region',
  },
);

const RuleError = Type.Object({
  resource_id: Type.String(),
  message: Type.String({ description: 'the reason, e.g. "exceeded the evaluation budget of 100 ms"' }),
});

/** How the rule fares in this tenant's audits: the rule budget (README, Compliance, "Rule budget"). */
export const RuleEvaluationSchema = Type.Object(
  {
    state: StringEnum(['active', 'suspended'] as const, { description: 'a suspended custom rule is skipped by audits until it is updated' }),
    budget_exceeded_runs: Type.Integer({ description: 'consecutive audit runs in which the rule exceeded its evaluation budget' }),
    suspended_at: Nullable(Timestamp),
    suspended_reason: Nullable(Type.String()),
    last_run: Nullable(
      Type.Object({
        run_id: Uuid,
        workspace_id: Uuid,
        at: Timestamp,
        evaluations: Type.Integer(),
        errors: Type.Integer({ description: 'evaluations that gave no verdict (never counted as a pass)' }),
        budget_exceeded: Type.Integer(),
        stopped: Nullable(Type.String({ description: 'why the rule was not evaluated on the rest of the run' })),
        error: Nullable(RuleError),
      }),
    ),
  },
  { description: "How the rule fares in this tenant's audits" },
);

export const NistControlSchema = Type.Object({
  control_id: Type.String(),
  source: described(StringEnum(NIST_SOURCES), 'the public mapping the control is taken from (content/rules/README.md)'),
});

export const RuleSchema = Type.Object({
  id: Type.String(),
  title: Type.String({ description: 'the check, worded as the desired state (rule listings)' }),
  description: Type.String(),
  finding_title: Type.String({ description: 'the failure wording every finding of the rule carries (a custom rule without one: "Fails: <title>")' }),
  finding_description: Type.String(),
  severity: SeverityName,
  resource_type: Type.String(),
  framework: FrameworkName,
  control_id: Type.String(),
  framework_mappings: Type.Array(FrameworkMappingSchema, { description: 'the other controls a failure of the rule fails (counted in control states and scores)' }),
  related_mappings: Type.Array(FrameworkMappingSchema, {
    description: 'NIST SP 800-53 controls a public mapping relates to the rule that are not its primary controls: shown, never counted as failing',
  }),
  nist_controls: Type.Array(NistControlSchema, { description: "a built-in rule's primary NIST SP 800-53 rev5 controls and the mapping each comes from (empty for custom rules)" }),
  condition: Type.String({ description: 'CEL over `resource`; true when the resource violates the rule' }),
  remediation: RemediationSchema,
  group_by: Nullable(GroupBySchema),
  builtin: Type.Boolean(),
  terraform_fix_available: Type.Boolean(),
  evaluation: RuleEvaluationSchema,
  created_at: Nullable(described(Timestamp, 'null for a built-in rule')),
  updated_at: Nullable(described(Timestamp, 'null for a built-in rule')),
});

/** The schema with another description (the OpenAPI document shows it beside the property). */
function described<T extends TSchema>(schema: T, description: string) {
  return Type.Unsafe<Static<T>>({ ...schema, description });
}

export const RULE_ID_PATTERN = '^[a-z0-9][a-z0-9-]{1,99}$';
/** The fields of a custom rule; creation adds its id. */
const ruleFields = {
  title: Type.String({ minLength: 1, maxLength: 300 }),
  description: Type.String({ maxLength: 5000 }),
  finding_title: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: FINDING_TITLE_MAX,
        pattern: '^[^\\r\\n]+$',
        description: 'the failure wording of the rule\'s findings, one line ("Bucket is not encrypted"); must differ from title; omitted or null: "Fails: <title>"',
      }),
    ),
  ),
  finding_description: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 5000, description: 'omitted or null: generated from title and description' }))),
  severity: SeverityName,
  resource_type: Type.String({ pattern: '^[a-z0-9][a-z0-9-]*\\.[a-z0-9][a-z0-9_-]*\\.[a-z0-9][a-z0-9_-]*$', maxLength: 200 }),
  framework: FrameworkName,
  control_id: Type.String({ minLength: 1, maxLength: 50 }),
  framework_mappings: Type.Optional(Type.Array(FrameworkMappingSchema, { maxItems: 100 })),
  condition: Type.String({ minLength: 1, maxLength: 10_000 }),
  // A finding's remediation is text, so a rule's may be too: it becomes the summary, with no steps.
  remediation: Type.Union([RemediationSummary, RemediationSchema], { description: 'text (the summary, no steps) or {summary, steps}' }),
  group_by: Type.Optional(Nullable(GroupBySchema)),
};
export const RuleInput = Type.Object(
  { id: Type.String({ pattern: RULE_ID_PATTERN, description: 'lower case, digits and dashes (no colons)' }), ...ruleFields },
  { additionalProperties: false },
);
/**
 * PUT takes the rule's fields, and also the representation GET returns: its read-only fields are
 * ignored when they hold the rule's values and refused (400 naming the field) when they do not
 * (rules-service.ts checkReadOnly). `evaluation` describes audits, not the rule, and is ignored.
 */
const readOnlyRuleFields = {
  id: Type.Optional(Type.String({ maxLength: 100, description: "read-only: must be the rule's id" })),
  builtin: Type.Optional(Type.Boolean({ description: 'read-only: must be false' })),
  terraform_fix_available: Type.Optional(Type.Boolean({ description: 'read-only: must be false' })),
  created_at: Type.Optional(Nullable(described(Timestamp, "read-only: must be the rule's"))),
  updated_at: Type.Optional(Nullable(described(Timestamp, "read-only: must be the rule's (another value means the rule changed since it was read)"))),
  evaluation: Type.Optional(described(RuleEvaluationSchema, 'read-only status kept by audits: ignored (an update resets it)')),
  related_mappings: Type.Optional(Type.Array(FrameworkMappingSchema, { maxItems: 100, description: 'read-only: must be empty (built-in rules only)' })),
  nist_controls: Type.Optional(Type.Array(NistControlSchema, { maxItems: 2, description: 'read-only: must be empty (built-in rules only)' })),
};
export const RuleUpdate = Type.Object({ ...ruleFields, ...readOnlyRuleFields }, { additionalProperties: false });
export const RuleParams = Type.Object({ tenantID: Uuid, ruleID: Type.String({ minLength: 1, maxLength: 100 }) });
export const RuleListQuery = Type.Object({
  framework: Type.Optional(FrameworkName),
  resource_type: Type.Optional(Type.String({ maxLength: 200 })),
  severity: Type.Optional(SeverityName),
  builtin: Type.Optional(Type.Boolean({ description: 'true: built-in rules only; false: custom rules only' })),
  search: Type.Optional(Type.String({ maxLength: 200, description: 'matches id, title or description (case-insensitive)' })),
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

export const FrameworkSetting = Type.Object({
  id: FrameworkName,
  name: Type.String(),
  version: Type.String(),
  enabled: Type.Boolean(),
  default_enabled: Type.Boolean({
    description: 'whether a tenant that never switched it has it on: the four core frameworks are on, the frameworks carried as Prowler ships them off',
  }),
  controls: Type.Integer({ description: 'controls in the catalog (for a framework carried as Prowler ships it, the requirements Prowler lists)' }),
  rules: Type.Integer({ description: 'rules whose failure affects the framework' }),
});
const slaWindow = (description: string) => Nullable(Type.Integer({ minimum: 1, maximum: SLA_MAX_HOURS, description }));
const slaFields = (description: (severity: string) => string) => ({
  CRITICAL: slaWindow(description('CRITICAL')),
  HIGH: slaWindow(description('HIGH')),
  MEDIUM: slaWindow(description('MEDIUM')),
  LOW: slaWindow(description('LOW')),
  INFO: slaWindow(description('INFO')),
});
export const ComplianceSettings = Type.Object({
  frameworks: Type.Array(FrameworkSetting),
  sla: Type.Object(
    slaFields((s) => `hours from when a ${s} finding is opened until it is due; null: no SLA (default ${SLA_DEFAULT_HOURS[s as Severity] ?? 'none'})`),
    {
      description: "the SLA window per severity: the tenant's overrides over the defaults",
    },
  ),
});
const SlaUpdate = Type.Partial(Type.Object(slaFields((s) => `hours (1 to ${SLA_MAX_HOURS}) for ${s} findings; null: back to the default`)), {
  additionalProperties: false,
  minProperties: 1,
});
export const ComplianceSettingsUpdate = Type.Object(
  {
    frameworks: Type.Optional(
      Type.Array(Type.Object({ id: Type.String({ maxLength: 50 }), enabled: Type.Boolean() }, { additionalProperties: false }), {
        minItems: 1,
        maxItems: 20,
      }),
    ),
    sla: Type.Optional(SlaUpdate),
  },
  { additionalProperties: false, minProperties: 1 },
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
    resources_evaluated: Type.Integer({ description: 'resources of the audited types this run evaluated: new, changed, or under changed rules' }),
    resources_unchanged: Type.Integer({
      description:
        'resources of the audited types this run did not evaluate: unchanged (what a rule reads of them, and the neighbours their rules group findings by) since an audit evaluated them under the same rules; their findings and unknown evaluations stay as they are',
    }),
    rules_evaluated: Type.Integer(),
    evaluations: Type.Integer(),
    evaluation_errors: Type.Integer({ description: 'evaluations whose condition failed or ran past its budget (each is also unknown)' }),
    unknown: Type.Integer({
      description:
        'evaluations whose outcome is unknown (the resource lacked configuration the rule cannot judge without, or an evaluation error); each is listed by GET /evaluations/unknown',
    }),
    missing_configuration: Type.Object(
      { violations: Type.Integer(), passes: Type.Integer(), unknown: Type.Integer() },
      { description: "evaluations decided by the rule's when_missing because the resource lacked a path the rule reads" },
    ),
    rule_missing: Type.Array(
      Type.Object({
        rule_id: Type.String(),
        violations: Type.Integer(),
        passes: Type.Integer(),
        unknown: Type.Integer(),
        missing_paths: Type.Array(Type.String(), { description: 'the paths found missing (the first 20)' }),
      }),
      { description: 'rules that found resources lacking configuration, how they judged them and the paths missing (most unknown first, at most 100)' },
    ),
    findings_created: Type.Integer(),
    findings_resolved: Type.Integer(),
    findings_reopened: Type.Integer(),
    severity_changes: Type.Integer(),
    budget_exceeded: Type.Integer({ description: 'evaluations that exceeded the rule budget (each is also an evaluation error)' }),
    rule_errors: Type.Array(
      Type.Object({
        rule_id: Type.String(),
        evaluations: Type.Integer(),
        errors: Type.Integer(),
        budget_exceeded: Type.Integer(),
        stopped: Nullable(Type.String()),
        error: Nullable(RuleError),
      }),
      { description: 'rules with evaluation errors in this run, budget errors first, with the first reason of each (at most 100)' },
    ),
    rules_suspended: Type.Array(Type.String(), { description: 'custom rules this run suspended' }),
    rules_skipped: Type.Array(Type.String(), { description: 'suspended rules this run did not evaluate' }),
  }),
  error: Nullable(Type.String()),
});
export const RunParams = Type.Object({ tenantID: Uuid, jobID: Uuid });

export { AnyObject };
