import { Type } from 'typebox';
import { Nullable, Paged, PageQuery, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { AssessmentStatus, GapSchema, NullableDate, Question } from './schemas.js';
import { DEFAULT_LINK_DAYS, MAX_LINK_DAYS } from './respondent-links.js';

/** Schemas of outside respondents' links: the reviewer's management routes and the respondent's own. */

export const LinkParams = Type.Object({ tenantID: Uuid, aID: Uuid, linkID: Uuid });

export const CreateLinkBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'who the link is for (a person or a supplier); shown in the audit log' }),
    recipient_email: Type.Optional(
      Type.String({ maxLength: 300, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', description: "mailed there through the tenant's e-mail integration, when it has one" }),
    ),
    expires_in_days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LINK_DAYS,
        default: DEFAULT_LINK_DAYS,
        description: `days until the link stops working (default ${DEFAULT_LINK_DAYS}, at most ${MAX_LINK_DAYS})`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const Link = Type.Object({
  id: Uuid,
  assessment_id: Uuid,
  name: Type.String(),
  recipient_email: Nullable(Type.String()),
  delivery: StringEnum(['email', 'copy'] as const, { description: 'email: mailed to recipient_email; copy: the token was returned once to the creator' }),
  status: StringEnum(['active', 'expired', 'revoked'] as const),
  created_by: Nullable(Uuid),
  created_by_name: Type.String(),
  created_at: Timestamp,
  expires_at: Timestamp,
  revoked_at: Nullable(Timestamp),
  revoked_by_name: Nullable(Type.String()),
  last_used_at: Nullable(Timestamp),
  use_count: Type.Integer(),
});
export const LinkList = Paged(Link);
export const LinkListQuery = Type.Object({ ...PageQuery });

export const CreatedLink = Type.Object({
  link: Link,
  delivery: StringEnum(['email', 'copy'] as const),
  email_error: Nullable(Type.String({ description: 'why a link with a recipient_email was not mailed (no e-mail integration, or the SMTP answer)' })),
  token: Nullable(Type.String({ description: 'delivery copy only: the link token (cgr_…), shown this once and never again' })),
  url: Nullable(
    Type.String({
      description:
        'delivery copy only: the console URL that opens the respondent view, the token in its fragment: CONTROLGRAPH_PUBLIC_URL + /respond#<token>. Null when CONTROLGRAPH_PUBLIC_URL is not set (the console then builds it from its own address: <origin>/respond#<token>)',
    }),
  ),
});

/** A file as the outside respondent sees it: no uploader identities, no tenant download URL. */
export const RespondentEvidence = Type.Object({
  id: Uuid,
  question_id: Type.String(),
  filename: Type.String(),
  extension: Type.String(),
  content_type: Type.String(),
  size_bytes: Type.Integer(),
  sha256: Type.String(),
  description: Type.String(),
  created_at: Timestamp,
});
export const RespondentEvidenceList = Paged(RespondentEvidence);
export const RespondentEvidenceQuery = Type.Object({ question_id: Type.Optional(Type.String({ maxLength: 80 })), ...PageQuery });

/** The one assessment of a link, without the tenant's people (assignee, reviewers, uploaders). */
export const RespondentAssessment = Type.Object({
  id: Uuid,
  questionnaire_title: Type.String(),
  lang: Type.String({ description: 'the language of questionnaire_title and the questions (?lang= or Accept-Language where the template has it); see GET /assessments/{aID}' }),
  questionnaire_version: Type.Integer(),
  framework: Nullable(Type.String()),
  status: AssessmentStatus,
  due_date: NullableDate,
  overdue: Type.Boolean(),
  progress: Type.Object({ total: Type.Integer(), answered: Type.Integer(), required: Type.Integer(), required_answered: Type.Integer() }),
  submitted_at: Nullable(Timestamp),
  review_status: Nullable(StringEnum(['approved', 'rejected'] as const)),
  review_notes: Nullable(Type.String()),
  gaps: Type.Array(GapSchema),
  questions: Type.Array(Question),
  responses: Type.Array(Type.Object({ question_id: Type.String(), answer: Type.String(), notes: Type.String(), updated_at: Timestamp })),
  evidence: Type.Array(RespondentEvidence),
  reviews: Type.Array(Type.Object({ review_status: StringEnum(['approved', 'rejected'] as const), notes: Type.String(), gaps: Type.Array(GapSchema), created_at: Timestamp })),
  link: Type.Object({ name: Type.String(), expires_at: Timestamp }),
});

export const RespondentUploadForm = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  properties: {
    question_id: { type: 'string', description: 'required, before the file' },
    description: { type: 'string' },
    file: { type: 'string', format: 'binary', description: "required: at most 50 MiB, extension in the question's accepted_types" },
  },
  description: "multipart/form-data: the field question_id (and optional description) before the file part; the assessment is the link's",
});
