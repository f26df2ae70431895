import { Type } from 'typebox';
import { DateOnly, Nullable, Paged, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { LIMITS, POAM_SEVERITIES, POAM_STATUSES } from './model.js';

const Status = StringEnum(POAM_STATUSES, { description: 'open → in_progress → verification → closed; back: in_progress → open, verification → in_progress' });
const Severity = StringEnum(POAM_SEVERITIES);

export const Milestone = Type.Object({
  date: DateOnly,
  description: Type.String(),
  done: Type.Boolean(),
});

export const Comment = Type.Object({
  at: Timestamp,
  author: Type.String({ description: 'username, API key name, or poam-finding-follower for automatic moves' }),
  text: Type.String(),
  status_from: Nullable(Status),
  status_to: Nullable(Status),
});

export const PoamItem = Type.Object({
  id: Type.String({ description: 'POAM-<n>, sequential per tenant, never reused' }),
  weakness_name: Type.String(),
  weakness_description: Type.String(),
  control_ids: Type.Array(Type.String(), { description: 'NIST SP 800-53 ids (AC-2, AC-2(1)); ids of other frameworks as <framework>:<control>' }),
  severity: Severity,
  point_of_contact: Type.String(),
  scheduled_completion: DateOnly,
  milestones: Type.Array(Milestone),
  status: Status,
  comments: Type.Array(Comment, { description: 'the audit-trailed log: creation, status changes, updates, evidence and plain comments, oldest first' }),
  vendor_dependency: Type.Boolean(),
  deviation_request: Nullable(Type.String()),
  finding_id: Nullable(Type.String()),
  evidence_ids: Type.Array(Uuid),
  source: Type.String({ description: 'manual, finding, or the creating module’s label (e.g. assessment:<id>)' }),
  overdue: Type.Boolean({ description: 'scheduled completion passed (UTC date) and not closed' }),
  created_by: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  closed_at: Nullable(Timestamp),
});

export const PoamList = Paged(PoamItem);

const MilestoneInput = Type.Object(
  {
    date: Type.String({ maxLength: 10, description: 'YYYY-MM-DD' }),
    description: Type.String({ maxLength: LIMITS.milestoneDescription }),
    done: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

const fields = {
  weakness_name: Type.String({ maxLength: LIMITS.name }),
  weakness_description: Type.String({ maxLength: LIMITS.description }),
  control_ids: Type.Array(Type.String({ maxLength: 100 }), { maxItems: LIMITS.controls }),
  severity: Type.String({ maxLength: 20, description: 'CRITICAL, HIGH, MEDIUM or LOW' }),
  point_of_contact: Type.String({ maxLength: LIMITS.contact }),
  scheduled_completion: Type.String({ maxLength: 10, description: 'YYYY-MM-DD; default by severity: CRITICAL 15 days, HIGH 30, MEDIUM 90, LOW 180' }),
  milestones: Type.Array(MilestoneInput, { maxItems: LIMITS.milestones, description: 'ordered as given' }),
  vendor_dependency: Type.Boolean(),
  deviation_request: Nullable(Type.String({ maxLength: LIMITS.deviation })),
};

export const CreateBody = Type.Object(
  {
    finding_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1200, description: 'draft from this open finding: name, description, severity and controls come from it unless given' }),
    ),
    weakness_name: Type.Optional(fields.weakness_name),
    weakness_description: Type.Optional(fields.weakness_description),
    control_ids: Type.Optional(fields.control_ids),
    severity: Type.Optional(fields.severity),
    point_of_contact: Type.Optional(Type.String({ maxLength: LIMITS.contact, description: 'required without finding_id; from a finding it defaults to the caller' })),
    scheduled_completion: Type.Optional(fields.scheduled_completion),
    milestones: Type.Optional(fields.milestones),
    vendor_dependency: Type.Optional(fields.vendor_dependency),
    deviation_request: Type.Optional(fields.deviation_request),
  },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  {
    weakness_name: fields.weakness_name,
    weakness_description: fields.weakness_description,
    control_ids: fields.control_ids,
    severity: fields.severity,
    point_of_contact: fields.point_of_contact,
    scheduled_completion: Type.Optional(Type.String({ maxLength: 10, description: 'YYYY-MM-DD; kept when omitted' })),
    milestones: Type.Optional(Type.Array(MilestoneInput, { maxItems: LIMITS.milestones, description: 'replaces the list; omitted means none' })),
    vendor_dependency: Type.Optional(Type.Boolean({ description: 'omitted means false' })),
    deviation_request: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.deviation, description: 'omitted means none' }))),
  },
  { additionalProperties: false },
);

export const StatusBody = Type.Object(
  {
    status: Type.String({ maxLength: 40, description: 'open, in_progress, verification or closed' }),
    comment: Type.Optional(Type.String({ maxLength: LIMITS.comment, description: 'appended to the comment log; required for a backward move' })),
  },
  { additionalProperties: false },
);

export const CommentBody = Type.Object({ text: Type.String({ maxLength: LIMITS.comment }) }, { additionalProperties: false });

const filters = {
  status: Type.Optional(Type.String({ maxLength: 200, description: 'comma-separated: open, in_progress, verification, closed' })),
  severity: Type.Optional(Type.String({ maxLength: 200, description: 'comma-separated: CRITICAL, HIGH, MEDIUM, LOW' })),
  control_id: Type.Optional(Type.String({ maxLength: 100, description: 'items naming this control (AC-2, ac-2.1, …)' })),
  point_of_contact: Type.Optional(Type.String({ maxLength: LIMITS.contact, description: 'exact, case-insensitive' })),
  finding_id: Type.Optional(Type.String({ maxLength: 1200 })),
};

export const ListQuery = Type.Object(
  {
    ...filters,
    overdue: Type.Optional(Type.Boolean({ description: 'true: only overdue items; false: only items that are not' })),
    sort: Type.Optional(Type.String({ maxLength: 40, description: 'number (default), scheduled_completion, severity, status, created_at, updated_at; prefix - for descending' })),
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  },
  { additionalProperties: false },
);

export const OverdueQuery = Type.Object(
  {
    ...filters,
    sort: Type.Optional(Type.String({ maxLength: 40, description: 'scheduled_completion (default: the most overdue first), number, severity, …' })),
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  },
  { additionalProperties: false },
);

export const ExportQuery = Type.Object(
  {
    format: Type.Optional(StringEnum(['fedramp', 'csv', 'json', 'oscal'] as const, { default: 'json' })),
    ...filters,
    overdue: Type.Optional(Type.Boolean()),
    system_name: Type.Optional(Type.String({ maxLength: 300, description: 'fedramp: System Name (default: the workspace name)' })),
    impact_level: Type.Optional(StringEnum(['Low', 'Moderate', 'High'] as const, { description: 'fedramp: Impact Level' })),
  },
  { additionalProperties: false },
);

const SeverityCounts = Type.Object(Object.fromEntries(POAM_SEVERITIES.map((s) => [s, Type.Integer()])));
const StatusCounts = Type.Object(Object.fromEntries(POAM_STATUSES.map((s) => [s, Type.Integer()])));

export const Summary = Type.Object({
  total: Type.Integer(),
  overdue: Type.Integer(),
  by_status: StatusCounts,
  by_severity: SeverityCounts,
  open_by_severity: Type.Object(Object.fromEntries(POAM_SEVERITIES.map((s) => [s, Type.Integer()])), { description: 'items not closed, by severity' }),
  by_status_and_severity: Type.Object(Object.fromEntries(POAM_STATUSES.map((s) => [s, SeverityCounts]))),
  as_of: DateOnly,
});

export const Evidence = Type.Object({
  id: Uuid,
  poam_id: Type.String(),
  filename: Type.String(),
  content_type: Type.String(),
  size_bytes: Type.Integer(),
  sha256: Type.String(),
  description: Nullable(Type.String()),
  uploaded_by: Type.String(),
  created_at: Timestamp,
});
export const EvidenceList = Type.Object({ items: Type.Array(Evidence) });

export const ItemParams = Type.Object({ tenantID: Uuid, poamId: Type.String({ minLength: 1, maxLength: 40, description: 'POAM-<n>' }) });
export const EvidenceParams = Type.Object({ tenantID: Uuid, poamId: Type.String({ minLength: 1, maxLength: 40 }), evidenceID: Type.String({ minLength: 1, maxLength: 40 }) });
export const EvidenceUploadQuery = Type.Object({ description: Type.Optional(Type.String({ maxLength: 4000 })) }, { additionalProperties: false });
