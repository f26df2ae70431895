-- Topology exports, discovery jobs and compliance reports (issue 6).

-- One row per export; its id is the id of the queue job that builds it (job_id of the API).
CREATE TABLE exports (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('architecture_diagram', 'drawio')),
  -- Normalised params (architecture_diagram: {format}; drawio: {}).
  params jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- queued and running follow the queue job; the final states are written here.
  status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'expired')),
  attempts integer NOT NULL DEFAULT 0,
  origin text NOT NULL DEFAULT 'api' CHECK (origin IN ('api', 'sync')),
  requested_by text,
  artifact_key text,
  content_type text,
  file_name text,
  size_bytes bigint,
  node_count integer,
  error text,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz,
  -- End of the retention period (finished_at + CONTROLGRAPH_EXPORT_RETENTION).
  expires_at timestamptz,
  expired_at timestamptz
);
CREATE INDEX exports_workspace_idx ON exports (workspace_id, created_at DESC, id);
CREATE INDEX exports_retention_idx ON exports (expires_at) WHERE status = 'succeeded';

-- Discovery jobs (/jobs): plugins that turn an inventory into nodes and edges. Created pending;
-- started jobs run on the queue under the same id.
CREATE TABLE discovery_jobs (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  plugins text[] NOT NULL,
  -- Plugin configuration; an uploaded Terraform state is dropped from it once the job has ended.
  config jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL CHECK (status IN ('pending', 'queued', 'running', 'completed', 'failed', 'cancelled')),
  -- The spec's stats (nodes_discovered, nodes_updated, findings_created, findings_resolved,
  -- duration_seconds); per-plugin counts in details; what was skipped in warnings.
  stats jsonb,
  details jsonb,
  warnings jsonb NOT NULL DEFAULT '[]'::jsonb,
  error text,
  attempts integer NOT NULL DEFAULT 0,
  created_by text,
  created_at timestamptz NOT NULL,
  queued_at timestamptz,
  started_at timestamptz,
  completed_at timestamptz
);
CREATE INDEX discovery_jobs_workspace_idx ON discovery_jobs (workspace_id, created_at DESC, id);
CREATE INDEX discovery_jobs_status_idx ON discovery_jobs (workspace_id, status, created_at);

-- Compliance reports built on the queue into the artifact store.
CREATE TABLE reports (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  type text NOT NULL,
  framework text,
  format text NOT NULL CHECK (format IN ('pdf', 'json', 'csv')),
  asset_group_id uuid,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'expired')),
  attempts integer NOT NULL DEFAULT 0,
  requested_by text,
  artifact_key text,
  content_type text,
  file_name text,
  size_bytes bigint,
  summary jsonb,
  error text,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz,
  expires_at timestamptz,
  expired_at timestamptz
);
CREATE INDEX reports_workspace_idx ON reports (workspace_id, created_at DESC, id);
CREATE INDEX reports_retention_idx ON reports (expires_at) WHERE status = 'succeeded';
