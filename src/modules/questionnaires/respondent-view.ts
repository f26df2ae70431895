import type { presentAssessment } from './assessment-view.js';
import type { AssessmentLinkRow, EvidenceRow } from './tables.js';

/** What an outside respondent is shown: their assessment's questions and answers, none of the tenant's people. */

type Full = Awaited<ReturnType<typeof presentAssessment>>;
type EvidenceFacts = Pick<EvidenceRow, 'id' | 'question_id' | 'filename' | 'extension' | 'content_type' | 'size_bytes' | 'sha256' | 'description' | 'created_at'>;

export function respondentEvidence(e: EvidenceFacts) {
  return {
    id: e.id,
    question_id: e.question_id,
    filename: e.filename,
    extension: e.extension,
    content_type: e.content_type,
    size_bytes: e.size_bytes,
    sha256: e.sha256,
    description: e.description,
    created_at: e.created_at,
  };
}

export function respondentAssessment(full: Full & { lang: string }, link: AssessmentLinkRow) {
  return {
    id: full.id,
    questionnaire_title: full.questionnaire_title,
    lang: full.lang,
    questionnaire_version: full.questionnaire_version,
    framework: full.framework,
    status: full.status,
    due_date: full.due_date,
    overdue: full.overdue,
    progress: full.progress,
    submitted_at: full.submitted_at,
    review_status: full.review_status,
    review_notes: full.review_notes,
    gaps: full.gaps,
    questions: full.questions,
    responses: full.responses.map((r) => ({ question_id: r.question_id, answer: r.answer, notes: r.notes, updated_at: r.updated_at })),
    evidence: full.evidence.map(respondentEvidence),
    reviews: full.reviews.map((r) => ({ review_status: r.review_status, notes: r.notes, gaps: r.gaps, created_at: r.created_at })),
    link: { name: link.name, expires_at: link.expires_at },
  };
}
