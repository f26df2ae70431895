-- POA&M (plan of action and milestones) items, their comment log, evidence and the follower of
-- finding events that moves items to verification.

-- The last POA&M number handed out per tenant. Numbers come from here (UPDATE … RETURNING under the
-- row lock), never from max()+1, so concurrent creators cannot collide and a deleted item's number is
-- never handed out again.
CREATE TABLE poam_counters (
  tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  last_number integer NOT NULL CHECK (last_number >= 0)
);

CREATE TABLE poam_items (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- POAM-<number>; unique per tenant (the counter is per tenant, items live in a workspace).
  number integer NOT NULL CHECK (number > 0),
  weakness_name text NOT NULL,
  weakness_description text NOT NULL,
  control_ids text[] NOT NULL,
  severity text NOT NULL CHECK (severity IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW')),
  point_of_contact text NOT NULL,
  scheduled_completion date NOT NULL,
  -- [{date, description, done}] in the order given.
  milestones jsonb NOT NULL DEFAULT '[]'::jsonb,
  status text NOT NULL CHECK (status IN ('open', 'in_progress', 'verification', 'closed')),
  vendor_dependency boolean NOT NULL DEFAULT false,
  deviation_request text,
  finding_id text,
  -- Where the item came from: manual, finding, or a caller's label such as assessment:<id>.
  source text NOT NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  closed_at timestamptz,
  PRIMARY KEY (tenant_id, number)
);
CREATE INDEX poam_items_workspace_idx ON poam_items (workspace_id, number);
CREATE INDEX poam_items_status_idx ON poam_items (workspace_id, status, scheduled_completion);
CREATE INDEX poam_items_controls_idx ON poam_items USING gin (control_ids);
-- A finding has at most one item that is not closed (a recurrence after closing gets a new item).
CREATE UNIQUE INDEX poam_items_finding_idx ON poam_items (workspace_id, finding_id)
  WHERE finding_id IS NOT NULL AND status <> 'closed';
CREATE INDEX poam_items_finding_all_idx ON poam_items (workspace_id, finding_id) WHERE finding_id IS NOT NULL;

-- The audit-trailed comment log of an item: status changes and plain comments, append-only.
CREATE TABLE poam_comments (
  id bigserial PRIMARY KEY,
  tenant_id uuid NOT NULL,
  number integer NOT NULL,
  author text NOT NULL,
  text text NOT NULL,
  status_from text,
  status_to text,
  created_at timestamptz NOT NULL,
  FOREIGN KEY (tenant_id, number) REFERENCES poam_items (tenant_id, number) ON DELETE CASCADE
);
CREATE INDEX poam_comments_item_idx ON poam_comments (tenant_id, number, id);

-- Evidence files of an item (the artifact store holds the bytes). Closing needs at least one.
CREATE TABLE poam_evidence (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  number integer NOT NULL,
  filename text NOT NULL,
  content_type text NOT NULL,
  size_bytes bigint NOT NULL,
  sha256 text NOT NULL,
  storage_key text NOT NULL,
  description text,
  uploaded_by text NOT NULL,
  created_at timestamptz NOT NULL,
  FOREIGN KEY (tenant_id, number) REFERENCES poam_items (tenant_id, number) ON DELETE CASCADE
);
CREATE INDEX poam_evidence_item_idx ON poam_evidence (tenant_id, number, created_at);

-- The finding-event follower: its read position in outbox_events, and the events it has handled
-- since (a transaction that took a lower seq can commit later, so a window behind the position is
-- read again; receipts make that re-read harmless).
CREATE TABLE poam_follower (
  name text PRIMARY KEY,
  position bigint NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE TABLE poam_follower_receipts (
  seq bigint PRIMARY KEY,
  handled_at timestamptz NOT NULL
);
