-- Applications, business services and asset groups (issue 12). Membership is never stored: it is
-- the filter evaluated against the nodes at read time, so it always follows the graph.

CREATE TABLE applications (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  -- An expression of the filter language (see the module README).
  filter text NOT NULL,
  -- Derived applications are discovered from the tag keys application, app, project, service and
  -- workload: one per tag value, with the exact key spellings it was found under.
  derived boolean NOT NULL DEFAULT false,
  derived_value text,
  derived_keys text[] NOT NULL DEFAULT '{}',
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK (derived = (derived_value IS NOT NULL))
);
CREATE UNIQUE INDEX applications_name_idx ON applications (workspace_id, lower(name)) WHERE NOT derived;
CREATE UNIQUE INDEX applications_derived_idx ON applications (workspace_id, derived_value) WHERE derived;
CREATE INDEX applications_list_idx ON applications (workspace_id, lower(name), id);

CREATE TABLE business_services (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  criticality text NOT NULL CHECK (criticality IN ('critical', 'high', 'medium', 'low')),
  sla_tier text,
  owner text,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX business_services_name_idx ON business_services (workspace_id, lower(name));

CREATE TABLE business_service_applications (
  service_id uuid NOT NULL REFERENCES business_services (id) ON DELETE CASCADE,
  application_id uuid NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  added_at timestamptz NOT NULL,
  PRIMARY KEY (service_id, application_id)
);
CREATE INDEX business_service_applications_app_idx ON business_service_applications (application_id);

CREATE TABLE asset_groups (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  filter text NOT NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX asset_groups_name_idx ON asset_groups (workspace_id, lower(name));
