import { Type } from 'typebox';
import { AnyObject, DateOnly, Nullable, Paged, PageQuery, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { QUESTION_TYPES, UNITS } from './questions.js';
import { CONTROL_STATUSES } from './control-status.js';
import { LANGUAGES } from './templates.js';

export const QuestionnaireParams = Type.Object({ tenantID: Uuid, qID: Uuid });
export const QuestionParams = Type.Object({ tenantID: Uuid, qID: Uuid, questionID: Type.String({ minLength: 1, maxLength: 80 }) });
export const TemplateParams = Type.Object({ tenantID: Uuid, templateID: Type.String({ minLength: 1, maxLength: 100 }) });
export const AssessmentParams = Type.Object({ tenantID: Uuid, aID: Uuid });
export const EvidenceParams = Type.Object({ tenantID: Uuid, eID: Uuid });

const Lang = Type.Optional(Type.String({ maxLength: 35, description: `en, de, fr or pt; unsupported values fall back to Accept-Language, then English` }));
const Severity = StringEnum(['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'] as const);
const Text = (max: number, options: Record<string, unknown> = {}) => Type.String({ maxLength: max, ...options });

const Option = Type.Object({ value: Type.String({ maxLength: 100 }), label: Type.String({ maxLength: 500 }) }, { additionalProperties: false });

const questionFields = {
  text: Type.String({ maxLength: 4000 }),
  help: Type.Optional(Text(4000)),
  type: StringEnum(QUESTION_TYPES),
  required: Type.Optional(Type.Boolean({ default: false })),
  options: Type.Optional(Type.Array(Option, { maxItems: 100, description: 'single_choice and multi_choice only, at least 2' })),
  min: Type.Optional(Type.Number({ description: 'number only' })),
  max: Type.Optional(Type.Number({ description: 'number only' })),
  unit: Type.Optional(StringEnum(UNITS, { description: 'number only' })),
  accepted_types: Type.Optional(Type.Array(Text(12), { maxItems: 50, description: 'file_upload only: file extensions such as ".pdf"' })),
  control_mappings: Type.Optional(
    Type.Array(Text(100), {
      maxItems: 100,
      description: '"<framework>:<control_id>" such as "nist-800-53:PE-3", or the shorthand "NIST-PE-3" (read as "nist-800-53:PE-3"); returned as written',
    }),
  ),
  control_ids: Type.Optional(
    Type.Array(Text(100), {
      maxItems: 100,
      description: 'read-only: accepted so a question read can be written back unchanged; 400 when it differs from the normalised control_mappings',
    }),
  ),
};

export const QuestionInput = Type.Object(
  { id: Type.Optional(Type.String({ maxLength: 80, description: 'lower-case letters, digits and dashes; generated (q-<n>) when absent' })), ...questionFields },
  { additionalProperties: false },
);
export const AddQuestionBody = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 80 })),
    ...questionFields,
    position: Type.Optional(Type.Integer({ minimum: 0, description: 'index to insert at; appended when absent' })),
  },
  { additionalProperties: false },
);

export const Question = Type.Object({
  id: Type.String(),
  text: Type.String(),
  help: Type.Optional(Type.String()),
  type: StringEnum(QUESTION_TYPES),
  required: Type.Boolean(),
  options: Type.Optional(Type.Array(Type.Object({ value: Type.String(), label: Type.String() }))),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  unit: Type.Optional(Type.String()),
  accepted_types: Type.Optional(Type.Array(Type.String())),
  control_mappings: Type.Array(Type.String(), { description: 'as the client wrote them (templates: "<framework>:<control_id>")' }),
  control_ids: Type.Array(Type.String(), {
    description: 'control_mappings normalised to "<framework>:<control_id>", once each (e.g. NIST-PE-3 is nist-800-53:PE-3): the controls an approval attests',
  }),
});

export const NullableDate = Nullable(DateOnly);
const Assignees = Type.Array(Text(100), { maxItems: 500, description: 'user ids or usernames of members of the tenant' });
const ValidityDays = Type.Integer({ minimum: 1, maximum: 1095, description: 'how long an approval attests the mapped controls (default 365)' });

export const QuestionnaireBody = Type.Object(
  {
    title: Type.String({ maxLength: 500 }),
    description: Type.Optional(Text(20_000)),
    questions: Type.Optional(Type.Array(QuestionInput, { maxItems: 200 })),
    assignees: Type.Optional(Assignees),
    due_date: Type.Optional(NullableDate),
    framework: Type.Optional(Nullable(Text(50))),
    attestation_validity_days: Type.Optional(ValidityDays),
  },
  { additionalProperties: false },
);

export const QuestionnaireUpdateBody = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 500 })),
    description: Type.Optional(Text(20_000)),
    questions: Type.Optional(Type.Array(QuestionInput, { maxItems: 200, description: 'replaces all questions (draft only)' })),
    assignees: Type.Optional(Assignees),
    due_date: Type.Optional(NullableDate),
    framework: Type.Optional(Nullable(Text(50))),
    attestation_validity_days: Type.Optional(ValidityDays),
  },
  { additionalProperties: false, description: 'draft: every field; published: title, description, assignees and due_date only (409 otherwise)' },
);

export const FromTemplateBody = Type.Object(
  {
    template_id: Type.String({ maxLength: 100 }),
    title: Type.Optional(Type.String({ maxLength: 500, description: "default: the template's title in the chosen language" })),
    description: Type.Optional(Text(20_000)),
    assignees: Type.Optional(Assignees),
    due_date: Type.Optional(NullableDate),
    framework: Type.Optional(Nullable(Text(50))),
    lang: Lang,
    attestation_validity_days: Type.Optional(ValidityDays),
  },
  { additionalProperties: false },
);

export const AssignBody = Type.Object(
  {
    assignees: Type.Optional(Type.Array(Text(100), { minItems: 1, maxItems: 500, description: "user ids or usernames; default: the questionnaire's assignees" })),
    reviewer_id: Type.Optional(Nullable(Text(100))),
    due_date: Type.Optional(NullableDate),
  },
  { additionalProperties: false },
);

export const Questionnaire = Type.Object({
  id: Uuid,
  family_id: Uuid,
  version: Type.Integer(),
  previous_version_id: Nullable(Uuid),
  title: Type.String(),
  description: Type.String(),
  framework: Nullable(Type.String()),
  frameworks: Type.Array(Type.String(), { description: 'frameworks the questions map to' }),
  template_id: Nullable(Type.String()),
  template_version: Nullable(Type.Integer()),
  lang: Type.String(),
  status: StringEnum(['draft', 'published', 'archived'] as const),
  questions: Type.Array(Question),
  question_count: Type.Integer(),
  assignees: Type.Array(Type.String(), { description: 'default assignees (user ids)' }),
  due_date: NullableDate,
  attestation_validity_days: Type.Integer(),
  created_by: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  published_at: Nullable(Timestamp),
  archived_at: Nullable(Timestamp),
});

export const QuestionnaireList = Paged(Questionnaire);
export const QuestionnaireListQuery = Type.Object({
  status: Type.Optional(StringEnum(['draft', 'published', 'archived'] as const)),
  framework: Type.Optional(Text(50)),
  template_id: Type.Optional(Text(100)),
  ...PageQuery,
});

/** What a template's list entry and the full template both show (first, in this order). */
const templateHead = {
  id: Type.String(),
  lang: StringEnum(LANGUAGES),
  version: Type.Integer(),
  title: Type.String(),
  description: Type.String(),
  framework: Type.String(),
  frameworks: Type.Array(Type.String()),
  attestation_validity_days: Type.Integer(),
};
export const TemplateSummary = Type.Object({ ...templateHead, question_count: Type.Integer(), references: Type.Array(Type.String()) });
export const TemplateList = Paged(TemplateSummary, { lang: StringEnum(LANGUAGES, { description: 'the language served' }) });
export const Template = Type.Object({ ...templateHead, references: Type.Array(Type.String()), questions: Type.Array(Question) });
export const TemplateQuery = Type.Object({ framework: Type.Optional(Text(50)), lang: Lang, ...PageQuery });
export const LangQuery = Type.Object({ lang: Lang });

export const AssessmentStatus = StringEnum(['assigned', 'in_progress', 'submitted', 'changes_requested', 'approved'] as const);
export const GapSchema = Type.Object({ question_id: Type.String(), severity: Severity, notes: Type.String() });

export const AssessmentSummary = Type.Object({
  id: Uuid,
  questionnaire_id: Uuid,
  questionnaire_title: Type.String(),
  questionnaire_version: Type.Integer(),
  framework: Nullable(Type.String()),
  status: AssessmentStatus,
  assignee_id: Uuid,
  assignee: Nullable(Type.String()),
  reviewer_id: Nullable(Uuid),
  reviewer: Nullable(Type.String()),
  due_date: NullableDate,
  overdue: Type.Boolean(),
  progress: Type.Object({ total: Type.Integer(), answered: Type.Integer(), required: Type.Integer(), required_answered: Type.Integer() }),
  controls: Type.Array(Type.String(), {
    description: 'the controls an approval attests ("<framework>:<control_id>"); those of nist-800-53, cis-aws, pci-dss and soc2 count in the compliance score',
  }),
  submitted_at: Nullable(Timestamp),
  reviewed_at: Nullable(Timestamp),
  reviewed_by: Nullable(Type.String()),
  review_status: Nullable(StringEnum(['approved', 'rejected'] as const)),
  review_notes: Nullable(Type.String()),
  gaps: Type.Array(GapSchema),
  approved_at: Nullable(Timestamp),
  attestation_expires_at: Nullable(Timestamp),
  attestation_state: Nullable(StringEnum(['current', 'expired'] as const)),
  attestation_validity_days: Type.Integer({
    description: "the questionnaire's: an approval attests the controls until this many days after it (what a reviewer is told before approving)",
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const Evidence = Type.Object({
  id: Uuid,
  assessment_id: Uuid,
  question_id: Type.String(),
  filename: Type.String(),
  extension: Type.String(),
  content_type: Type.String(),
  size_bytes: Type.Integer(),
  sha256: Type.String(),
  description: Type.String(),
  uploaded_by: Nullable(Type.String()),
  uploaded_by_name: Type.String(),
  created_at: Timestamp,
  download_url: Type.String(),
});

export const Assessment = Type.Object({
  ...AssessmentSummary.properties,
  lang: Type.String({
    description:
      "the language of questionnaire_title and the questions: ?lang= or Accept-Language where the questionnaire's template has it, else the questionnaire's own; a question edited after creation from the template stays as written",
  }),
  questions: Type.Array(Question),
  responses: Type.Array(Type.Object({ question_id: Type.String(), answer: Type.String(), notes: Type.String(), updated_at: Timestamp, updated_by: Nullable(Type.String()) })),
  evidence: Type.Array(Evidence),
  reviews: Type.Array(
    Type.Object({
      review_status: StringEnum(['approved', 'rejected'] as const),
      notes: Type.String(),
      gaps: Type.Array(GapSchema),
      reviewer_id: Nullable(Type.String()),
      reviewer: Type.String(),
      created_at: Timestamp,
    }),
  ),
});

export const AssessmentList = Paged(AssessmentSummary);
export const AssignResult = Type.Object({ items: Type.Array(AssessmentSummary) });
export const AssessmentListQuery = Type.Object({
  status: Type.Optional(AssessmentStatus),
  questionnaire_id: Type.Optional(Uuid),
  assignee_id: Type.Optional(Uuid),
  ...PageQuery,
});
export const MineQuery = Type.Object({ status: Type.Optional(AssessmentStatus), questionnaire_id: Type.Optional(Uuid), ...PageQuery });
export const PageOnlyQuery = Type.Object({ ...PageQuery });

export const RespondBody = Type.Object(
  {
    responses: Type.Array(
      Type.Object(
        {
          question_id: Type.String({ maxLength: 80 }),
          answer: Type.Optional(Type.String({ maxLength: 20_000, description: 'format by question type; "" clears the answer' })),
          notes: Type.Optional(Type.String({ maxLength: 10_000 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 500 },
    ),
  },
  { additionalProperties: false },
);

const GapInput = Type.Object({ question_id: Type.String({ maxLength: 80 }), severity: Type.Optional(Severity), notes: Type.Optional(Text(4000)) }, { additionalProperties: false });
export const ReviewBody = Type.Object(
  {
    review_status: StringEnum(['approved', 'rejected', 'approve', 'reject'] as const),
    notes: Type.Optional(Text(10_000, { description: 'required when rejecting' })),
    gaps: Type.Optional(Type.Array(GapInput, { maxItems: 200, description: 'questions to raise POA&M items for (generate-poam)' })),
  },
  { additionalProperties: false },
);
export const AliasReviewBody = Type.Object(
  { notes: Type.Optional(Text(10_000)), gaps: Type.Optional(Type.Array(GapInput, { maxItems: 200 })) },
  { additionalProperties: false, description: 'optional' },
);

export const GeneratePoamBody = Type.Object(
  {
    question_ids: Type.Optional(Type.Array(Type.String({ maxLength: 80 }), { minItems: 1, maxItems: 200 })),
    severity: Type.Optional(Severity),
    point_of_contact: Type.Optional(Text(300)),
    scheduled_completion: Type.Optional(DateOnly),
  },
  { additionalProperties: false, description: 'optional' },
);
export const GeneratePoamResult = Type.Object({
  items: Type.Array(AnyObject, { description: 'POA&M items (contracts section 6), new and previously raised' }),
  created: Type.Integer(),
  existing: Type.Integer(),
});

export const ControlAttestation = Type.Object({
  framework: Type.String(),
  control_id: Type.String(),
  title: Type.String(),
  status: StringEnum(CONTROL_STATUSES),
  assessment_id: Nullable(Uuid),
  questionnaire_id: Nullable(Uuid),
  questionnaire_title: Nullable(Type.String()),
  attested_at: Nullable(Timestamp),
  expires_at: Nullable(Timestamp),
  days_until_expiry: Nullable(Type.Integer()),
  expiring_soon: Type.Boolean({ description: 'attested and expiring within 7 days' }),
  expiry_warning: Nullable(StringEnum(['notice', 'warning', 'urgent'] as const, { description: 'within 60, 30 or 7 days of expiry' })),
  reminder_sent_days: Nullable(
    Type.Integer({ description: 'the most urgent expiry reminder sent for this attestation: 60, 30 or 7 (days before expiry); null when none was sent yet' }),
  ),
});
export const ControlAttestationList = Paged(ControlAttestation, {
  counts: Type.Object({
    ...Object.fromEntries(CONTROL_STATUSES.map((s) => [s, Type.Integer()])),
    expiring_soon: Type.Integer(),
  }),
});
export const ControlAttestationQuery = Type.Object({
  framework: Type.Optional(Text(50)),
  status: Type.Optional(StringEnum(CONTROL_STATUSES)),
  expiring_soon: Type.Optional(Type.Boolean()),
  ...PageQuery,
});

export const EvidenceList = Paged(Evidence);
export const DownloadQuery = Type.Object({
  disposition: Type.Optional(StringEnum(['attachment', 'inline'] as const, { description: 'inline: shown in the page when it is a PDF or an image (default attachment)' })),
});
export const EvidenceListQuery = Type.Object({ assessment_id: Type.Optional(Uuid), question_id: Type.Optional(Text(80)), ...PageQuery });
/**
 * Documents the multipart form. The parts are checked while streaming; the route sets the (unparsed)
 * body to {} before validation, so nothing here is required.
 */
export const EvidenceUploadForm = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  properties: {
    assessment_id: { type: 'string', format: 'uuid', description: 'required, before the file' },
    question_id: { type: 'string', description: 'required, before the file' },
    description: { type: 'string' },
    file: { type: 'string', format: 'binary', description: "required: at most 50 MiB, extension in the question's accepted_types" },
  },
  description: 'multipart/form-data: the fields assessment_id and question_id (and optional description) before the file part',
});
export const Binary = Type.Unsafe<unknown>({ type: 'string', format: 'binary' });
