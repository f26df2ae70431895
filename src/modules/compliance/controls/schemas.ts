import { Type } from 'typebox';
import { Nullable, Paged, PageNumber, StringEnum, Timestamp } from '../../../platform/http/schemas.js';
import { FrameworkName, SeverityName } from '../schemas.js';
import { ATTESTATION_STATUSES, AUTOMATED_STATES } from './control-statuses.js';

/** The controls status and gaps endpoints (GET /controls, GET /controls/gaps); moved out of findings/schemas.ts. */

/** The same page/per_page as the findings lists. */
const pageFields = {
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
};

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
  unknown_evaluations: Type.Integer({ description: "(rule, resource) evaluations of the control's rules whose latest outcome is unknown (0 while it fails)" }),
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
      applicable_controls: Type.Integer({ description: "the controls of the framework that count (the score's denominator); the four counts below add up to it" }),
      passing_controls: Type.Integer({ description: 'controls that count towards the score' }),
      failing_controls: Type.Integer({ description: 'controls an active finding maps to' }),
      unknown_controls: Type.Integer({ description: 'controls of the framework whose automated state is unknown' }),
      not_attested_controls: Type.Integer({ description: 'controls no rule checks and no current attestation covers' }),
      not_assessed_controls: Type.Integer({
        description:
          'current controls of the catalog that nothing covers (no rule, finding, question or attestation): not applicable, so neither listed nor in the score, and never passing',
      }),
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
  unknown_evaluations: Type.Integer({ description: "evaluations of the control's rules whose outcome is unknown (0 while it fails)" }),
  max_severity: Nullable(SeverityName),
  automated: Type.Boolean(),
  attestation_status: AttestationStatusName,
  attestation_expires_at: AttestationExpiry,
});
