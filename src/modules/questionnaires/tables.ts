import type { Generated, Selectable } from 'kysely';
import type { Database, Json, NullableTimestamp, Timestamp } from '../../platform/db/schema.js';
import type { Question } from './questions.js';

export type QuestionnaireStatus = 'draft' | 'published' | 'archived';
export type AssessmentStatus = 'assigned' | 'in_progress' | 'submitted' | 'changes_requested' | 'approved';
export type GapSeverity = 'CRITICAL' | 'HIGH' | 'MEDIUM' | 'LOW';

export interface Gap {
  question_id: string;
  severity: GapSeverity;
  notes: string;
}

/** Questionnaire tables (migration 0007). */
declare module '../../platform/db/schema.js' {
  interface Database {
    questionnaires: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      family_id: string;
      version: number;
      previous_version_id: string | null;
      title: string;
      description: string;
      framework: string | null;
      template_id: string | null;
      template_version: number | null;
      lang: string;
      status: QuestionnaireStatus;
      questions: Json<Question[]>;
      assignees: string[];
      due_date: string | null;
      attestation_validity_days: number;
      created_by: string;
      created_at: Timestamp;
      updated_at: Timestamp;
      published_at: NullableTimestamp;
      archived_at: NullableTimestamp;
    };
    questionnaire_controls: { questionnaire_id: string; workspace_id: string; framework: string; control_id: string };
    assessments: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      questionnaire_id: string;
      assignee_id: string;
      reviewer_id: string | null;
      status: AssessmentStatus;
      due_date: string | null;
      assigned_by: string;
      submitted_at: NullableTimestamp;
      reviewed_at: NullableTimestamp;
      reviewed_by: string | null;
      review_status: 'approved' | 'rejected' | null;
      review_notes: string | null;
      gaps: Json<Gap[]>;
      approved_at: NullableTimestamp;
      attestation_expires_at: NullableTimestamp;
      expiry_recorded_at: NullableTimestamp;
      reminder_stage: number | null;
      created_at: Timestamp;
      updated_at: Timestamp;
    };
    assessment_responses: {
      assessment_id: string;
      question_id: string;
      answer: string;
      notes: string;
      updated_at: Timestamp;
      updated_by: string | null;
    };
    assessment_reviews: {
      id: string;
      assessment_id: string;
      review_status: 'approved' | 'rejected';
      notes: string;
      gaps: Json<Gap[]>;
      reviewer_id: string | null;
      reviewer_name: string;
      created_at: Timestamp;
      /** Insertion order: the tie-break for reviews made at the same instant. */
      seq: Generated<string>;
    };
    attestation_evidence: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      assessment_id: string;
      question_id: string;
      filename: string;
      extension: string;
      content_type: string;
      size_bytes: number;
      sha256: string;
      storage_key: string;
      description: string;
      uploaded_by: string | null;
      uploaded_by_name: string;
      created_at: Timestamp;
    };
    assessment_poam_items: { assessment_id: string; question_id: string; poam_id: string; created_at: Timestamp };
  }
}

export type QuestionnaireRow = Selectable<Database['questionnaires']>;
export type AssessmentRow = Selectable<Database['assessments']>;
export type ResponseRow = Selectable<Database['assessment_responses']>;
export type EvidenceRow = Selectable<Database['attestation_evidence']>;

/** Outside respondents' links to one assessment (migration 0035); only the token's SHA-256 is kept. */
declare module '../../platform/db/schema.js' {
  interface Database {
    assessment_links: {
      id: string;
      tenant_id: string;
      workspace_id: string;
      assessment_id: string;
      token_hash: string;
      name: string;
      recipient_email: string | null;
      delivery: 'email' | 'copy';
      created_by: string | null;
      created_by_name: string;
      created_at: Timestamp;
      expires_at: Timestamp;
      revoked_at: NullableTimestamp;
      revoked_by_name: string | null;
      last_used_at: NullableTimestamp;
      use_count: Generated<number>;
    };
  }
}

export type AssessmentLinkRow = Selectable<Database['assessment_links']>;
