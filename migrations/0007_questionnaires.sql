-- Questionnaires, assessments, their responses and reviews, attestation evidence, and the POA&M
-- items raised from assessments. The attestation state of controls lives in control_attestations
-- (migration 0003), written by this module and read by the compliance scores.

-- A questionnaire is one version of a reusable definition. Questions (jsonb, ordered) change only
-- while it is a draft; a published one changes through a new version (same family_id, version + 1),
-- and publishing that version archives the previous one.
CREATE TABLE questionnaires (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  family_id uuid NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  previous_version_id uuid REFERENCES questionnaires (id) ON DELETE SET NULL,
  title text NOT NULL,
  description text NOT NULL DEFAULT '',
  framework text,
  template_id text,
  template_version integer,
  lang text NOT NULL DEFAULT 'en',
  status text NOT NULL CHECK (status IN ('draft', 'published', 'archived')),
  questions jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Default assignees (user ids) for POST /assign without assignees.
  assignees uuid[] NOT NULL DEFAULT '{}',
  due_date date,
  attestation_validity_days integer NOT NULL DEFAULT 365 CHECK (attestation_validity_days BETWEEN 1 AND 1095),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  published_at timestamptz,
  archived_at timestamptz,
  UNIQUE (family_id, version)
);
CREATE INDEX questionnaires_workspace_idx ON questionnaires (workspace_id, created_at DESC, id);

-- The controls a questionnaire's questions map to, fixed at publish: what an assessment of it moves
-- in control_attestations (those of the scored frameworks also count in the compliance score).
CREATE TABLE questionnaire_controls (
  questionnaire_id uuid NOT NULL REFERENCES questionnaires (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  framework text NOT NULL,
  control_id text NOT NULL,
  PRIMARY KEY (questionnaire_id, framework, control_id)
);
CREATE INDEX questionnaire_controls_control_idx ON questionnaire_controls (workspace_id, framework, control_id);

-- One assigned instance of a published questionnaire, answered by its assignee.
CREATE TABLE assessments (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  questionnaire_id uuid NOT NULL REFERENCES questionnaires (id) ON DELETE CASCADE,
  assignee_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  reviewer_id uuid REFERENCES users (id) ON DELETE SET NULL,
  status text NOT NULL CHECK (status IN ('assigned', 'in_progress', 'submitted', 'changes_requested', 'approved')),
  due_date date,
  assigned_by text NOT NULL,
  submitted_at timestamptz,
  reviewed_at timestamptz,
  reviewed_by uuid,
  review_status text CHECK (review_status IN ('approved', 'rejected')),
  review_notes text,
  -- Questions the latest review flagged as gaps: [{question_id, severity, notes}].
  gaps jsonb NOT NULL DEFAULT '[]'::jsonb,
  approved_at timestamptz,
  attestation_expires_at timestamptz,
  -- Set once the expiry sweeper has recorded the end of the attestation (audit log, event).
  expiry_recorded_at timestamptz,
  -- The most urgent expiry reminder sent (60, 30 or 7 days before): each is sent at most once.
  reminder_stage integer CHECK (reminder_stage IN (60, 30, 7)),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((status = 'approved') = (approved_at IS NOT NULL AND attestation_expires_at IS NOT NULL))
);
CREATE INDEX assessments_workspace_idx ON assessments (workspace_id, created_at DESC, id);
CREATE INDEX assessments_assignee_idx ON assessments (workspace_id, assignee_id);
CREATE INDEX assessments_questionnaire_idx ON assessments (questionnaire_id);
CREATE INDEX assessments_expiry_idx ON assessments (attestation_expires_at) WHERE status = 'approved' AND expiry_recorded_at IS NULL;

-- Answers, saved incrementally (one row per answered question).
CREATE TABLE assessment_responses (
  assessment_id uuid NOT NULL REFERENCES assessments (id) ON DELETE CASCADE,
  question_id text NOT NULL,
  answer text NOT NULL DEFAULT '',
  notes text NOT NULL DEFAULT '',
  updated_at timestamptz NOT NULL,
  updated_by uuid,
  PRIMARY KEY (assessment_id, question_id)
);

-- Every review decision, oldest first (a rejected assessment is reviewed again after resubmission).
CREATE TABLE assessment_reviews (
  id uuid PRIMARY KEY,
  assessment_id uuid NOT NULL REFERENCES assessments (id) ON DELETE CASCADE,
  review_status text NOT NULL CHECK (review_status IN ('approved', 'rejected')),
  notes text NOT NULL DEFAULT '',
  gaps jsonb NOT NULL DEFAULT '[]'::jsonb,
  reviewer_id uuid,
  reviewer_name text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX assessment_reviews_assessment_idx ON assessment_reviews (assessment_id, created_at);

-- Files attached to an assessment's file_upload question; the bytes are in the artifact store.
CREATE TABLE attestation_evidence (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  assessment_id uuid NOT NULL REFERENCES assessments (id) ON DELETE CASCADE,
  question_id text NOT NULL,
  filename text NOT NULL,
  extension text NOT NULL,
  content_type text NOT NULL,
  size_bytes integer NOT NULL,
  sha256 text NOT NULL,
  storage_key text NOT NULL,
  description text NOT NULL DEFAULT '',
  uploaded_by uuid,
  uploaded_by_name text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX attestation_evidence_workspace_idx ON attestation_evidence (workspace_id, created_at DESC, id);
CREATE INDEX attestation_evidence_assessment_idx ON attestation_evidence (assessment_id, question_id);

-- POA&M items raised from an assessment (question_id '' for the assessment as a whole): raising
-- again returns the existing item instead of a duplicate.
CREATE TABLE assessment_poam_items (
  assessment_id uuid NOT NULL REFERENCES assessments (id) ON DELETE CASCADE,
  question_id text NOT NULL,
  poam_id text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (assessment_id, question_id)
);
