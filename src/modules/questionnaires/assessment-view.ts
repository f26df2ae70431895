import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { mappedControls, type Question } from './questions.js';
import { keyOf } from './control-status.js';
import { usernames, today } from './people.js';
import type { AssessmentRow, EvidenceRow, QuestionnaireRow } from './tables.js';

/** How assessments are returned: a summary in lists, the summary plus questions and answers when read. */

export function presentEvidence(row: EvidenceRow, tenantId: string) {
  return {
    id: row.id,
    assessment_id: row.assessment_id,
    question_id: row.question_id,
    filename: row.filename,
    extension: row.extension,
    content_type: row.content_type,
    size_bytes: row.size_bytes,
    sha256: row.sha256,
    description: row.description,
    uploaded_by: row.uploaded_by,
    uploaded_by_name: row.uploaded_by_name,
    created_at: row.created_at,
    download_url: `/api/v1/tenants/${tenantId}/attestation-evidence/${row.id}/download`,
  };
}

type QuestionnaireFacts = Pick<QuestionnaireRow, 'id' | 'title' | 'version' | 'framework' | 'questions' | 'attestation_validity_days'>;

function progressOf(questions: Question[], answered: Set<string>) {
  const required = questions.filter((q) => q.required);
  return {
    total: questions.length,
    answered: questions.filter((q) => answered.has(q.id)).length,
    required: required.length,
    required_answered: required.filter((q) => answered.has(q.id)).length,
  };
}

function summary(row: AssessmentRow, q: QuestionnaireFacts, names: Map<string, string>, answered: Set<string>, now: Date) {
  const expires = row.attestation_expires_at ? new Date(row.attestation_expires_at) : null;
  const open = row.status !== 'approved' && row.status !== 'submitted';
  return {
    id: row.id,
    questionnaire_id: row.questionnaire_id,
    questionnaire_title: q.title,
    questionnaire_version: q.version,
    framework: q.framework,
    status: row.status,
    assignee_id: row.assignee_id,
    assignee: names.get(row.assignee_id) ?? null,
    reviewer_id: row.reviewer_id,
    reviewer: row.reviewer_id ? (names.get(row.reviewer_id) ?? null) : null,
    due_date: row.due_date,
    overdue: open && row.due_date !== null && row.due_date < today(now),
    progress: progressOf(q.questions, answered),
    controls: mappedControls(q.questions).map(keyOf),
    submitted_at: row.submitted_at,
    reviewed_at: row.reviewed_at,
    reviewed_by: row.reviewed_by,
    review_status: row.review_status,
    review_notes: row.review_notes,
    gaps: row.gaps,
    approved_at: row.approved_at,
    attestation_expires_at: row.attestation_expires_at,
    attestation_state: expires ? (expires > now ? ('current' as const) : ('expired' as const)) : null,
    attestation_validity_days: q.attestation_validity_days,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Summaries of assessments, with their questionnaires, people and progress loaded in a few queries. */
export async function presentAssessments(db: Kysely<Database>, rows: AssessmentRow[], now: Date) {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [questionnaires, answered, names] = await Promise.all([
    db
      .selectFrom('questionnaires')
      .select(['id', 'title', 'version', 'framework', 'questions', 'attestation_validity_days'])
      .where('id', 'in', [...new Set(rows.map((r) => r.questionnaire_id))])
      .execute(),
    db.selectFrom('assessment_responses').select(['assessment_id', 'question_id']).where('assessment_id', 'in', ids).where('answer', '!=', '').execute(),
    usernames(
      db,
      rows.flatMap((r) => [r.assignee_id, r.reviewer_id]),
    ),
  ]);
  const byId = new Map(questionnaires.map((q) => [q.id, q]));
  const answeredBy = new Map<string, Set<string>>();
  for (const a of answered) {
    if (!answeredBy.has(a.assessment_id)) answeredBy.set(a.assessment_id, new Set());
    answeredBy.get(a.assessment_id)!.add(a.question_id);
  }
  return rows.map((row) => summary(row, byId.get(row.questionnaire_id)!, names, answeredBy.get(row.id) ?? new Set(), now));
}

/** One assessment in full: questions, answers, evidence and the review history. */
export async function presentAssessment(db: Kysely<Database>, row: AssessmentRow, now: Date) {
  const [base] = await presentAssessments(db, [row], now);
  const [questionnaire, responses, evidence, reviews] = await Promise.all([
    db.selectFrom('questionnaires').select(['questions']).where('id', '=', row.questionnaire_id).executeTakeFirstOrThrow(),
    db.selectFrom('assessment_responses').select(['question_id', 'answer', 'notes', 'updated_at', 'updated_by']).where('assessment_id', '=', row.id).execute(),
    db.selectFrom('attestation_evidence').selectAll().where('assessment_id', '=', row.id).orderBy('created_at').orderBy('id').execute(),
    db
      .selectFrom('assessment_reviews')
      .select(['review_status', 'notes', 'gaps', 'reviewer_id', 'reviewer_name', 'created_at'])
      .where('assessment_id', '=', row.id)
      .orderBy('seq')
      .execute(),
  ]);
  const order = new Map(questionnaire.questions.map((q, i) => [q.id, i]));
  return {
    ...base!,
    questions: questionnaire.questions,
    responses: responses.sort((a, b) => (order.get(a.question_id) ?? 0) - (order.get(b.question_id) ?? 0)),
    evidence: evidence.map((e) => presentEvidence(e, row.tenant_id)),
    reviews: reviews.map((r) => ({
      review_status: r.review_status,
      notes: r.notes,
      gaps: r.gaps,
      reviewer_id: r.reviewer_id,
      reviewer: r.reviewer_name,
      created_at: r.created_at,
    })),
  };
}
