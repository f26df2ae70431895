-- Host agents (issue 9): the agent registry, the state and inventories of each reporting host, and a
-- log of received reports. The host itself is a graph node (type host.os.instance); its inventories
-- live here, not in the node's properties, because every audit reads every node row.

-- An agent id belongs to one tenant and one workspace: the first report claims it.
CREATE TABLE agents (
  agent_id text PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- The host node of its last processed report.
  node_id text,
  hostname text,
  agent_version text,
  -- The API key of the last report (no foreign key: keys are revoked, not deleted, but may go).
  api_key_id uuid,
  first_seen_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  reports_processed integer NOT NULL DEFAULT 0,
  reports_ignored integer NOT NULL DEFAULT 0
);
CREATE INDEX agents_workspace_idx ON agents (workspace_id, last_seen_at DESC);
CREATE INDEX agents_tenant_idx ON agents (tenant_id);

-- One row per host node that agents report on. Deleting the node deletes its inventories.
CREATE TABLE agent_hosts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  node_id text NOT NULL,
  agent_id text NOT NULL,
  -- The last processed report: a report scanned before it is ignored (out-of-order delivery).
  last_scan_id text NOT NULL,
  last_scanned_at timestamptz NOT NULL,
  last_received_at timestamptz NOT NULL,
  -- Per collection: {status, reason, items} as the agent reported it.
  collectors jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Digest of the package inventory and of the vulnerability store it was matched against: when
  -- neither changed, a report needs no matching at all.
  packages_digest text NOT NULL DEFAULT '',
  vuln_state text NOT NULL DEFAULT '',
  -- The host SBOM: a stable serial number, and a version that increases when the inventory changes.
  sbom_serial uuid NOT NULL,
  sbom_version integer NOT NULL DEFAULT 1,
  sbom_updated_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, node_id),
  FOREIGN KEY (workspace_id, node_id) REFERENCES nodes (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX agent_hosts_tenant_idx ON agent_hosts (tenant_id);

-- Installed packages of each host, one row per package (rpm may hold several versions of a name).
CREATE TABLE agent_host_packages (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  node_id text NOT NULL,
  manager text NOT NULL,
  name text NOT NULL,
  arch text NOT NULL DEFAULT '',
  version text NOT NULL,
  source_name text,
  source_version text,
  installed_at timestamptz,
  purl text NOT NULL,
  -- CVEs the agent attached to the package, and those the vulnerability store matched.
  reported_cves text[] NOT NULL DEFAULT '{}',
  matched_cves text[] NOT NULL DEFAULT '{}',
  -- The matched advisories: [{id, source, cve_ids, fixed_versions, summary}].
  advisories jsonb NOT NULL DEFAULT '[]'::jsonb,
  PRIMARY KEY (workspace_id, node_id, manager, name, arch, version),
  FOREIGN KEY (workspace_id, node_id) REFERENCES agent_hosts (workspace_id, node_id) ON DELETE CASCADE
);
CREATE INDEX agent_host_packages_name_idx ON agent_host_packages (workspace_id, name);

-- The other collections of the last processed report (processes, ports, users, ...), one JSON array
-- each: they are replaced as a whole and read as a whole.
CREATE TABLE agent_host_collections (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  node_id text NOT NULL,
  collection text NOT NULL,
  items jsonb NOT NULL,
  item_count integer NOT NULL,
  digest text NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, node_id, collection),
  FOREIGN KEY (workspace_id, node_id) REFERENCES agent_hosts (workspace_id, node_id) ON DELETE CASCADE
);

-- The file-integrity baseline: the monitored files as the last processed report saw them.
CREATE TABLE agent_host_files (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  node_id text NOT NULL,
  path text NOT NULL,
  sha256 text,
  size_bytes bigint,
  modified_at timestamptz,
  permissions text,
  owner text,
  "group" text,
  first_seen_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, node_id, path),
  FOREIGN KEY (workspace_id, node_id) REFERENCES agent_hosts (workspace_id, node_id) ON DELETE CASCADE
);

-- Every report received, processed or ignored (and why); pruned after 30 days.
CREATE TABLE agent_reports (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  agent_id text NOT NULL,
  node_id text,
  scan_id text NOT NULL,
  scanned_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('processed', 'ignored')),
  reason text,
  compressed_bytes integer NOT NULL,
  raw_bytes integer NOT NULL,
  summary jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX agent_reports_agent_idx ON agent_reports (agent_id, received_at DESC);
CREATE INDEX agent_reports_workspace_idx ON agent_reports (workspace_id, received_at DESC);
CREATE INDEX agent_reports_received_idx ON agent_reports (received_at);
