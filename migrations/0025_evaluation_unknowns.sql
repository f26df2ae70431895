-- Evaluations whose outcome is unknown (issue 22, "fail closed"): a rule that could not judge a
-- resource. Each rule evaluated on a resource ends violated (a finding), passed, or unknown; an
-- unknown is never a silent pass. A row exists while the latest evaluation of (rule, resource) is
-- unknown, and goes when a later evaluation decides, when the resource disappears, or with the rule.
--
-- reason:
--   missing_configuration  a path the rule reads is absent and the rule's content declares
--                          `when_missing: unknown` (missing_paths lists them);
--   evaluation_error       the condition failed on the resource (detail: the message);
--   budget_exceeded        the evaluation ran past its time budget, or its rule was stopped for the
--                          run for doing so (detail: the message);
--   not_collected          a host rule needs data the agent did not collect (missing_paths: the
--                          collections), or none of the items it could read decides (detail).
--
-- framework, control_id and text_id are the rule's, as on a finding: an unknown counts for exactly
-- the controls a finding of the same rule would fail (control-state.ts).
CREATE TABLE evaluation_unknowns (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  resource_id text NOT NULL,
  rule_id text NOT NULL,
  resource_type text NOT NULL,
  resource_name text NOT NULL,
  region text NOT NULL,
  account_id text NOT NULL DEFAULT '',
  framework text NOT NULL,
  control_id text NOT NULL,
  text_id text NOT NULL,
  reason text NOT NULL CHECK (reason IN ('missing_configuration', 'evaluation_error', 'budget_exceeded', 'not_collected')),
  missing_paths text[] NOT NULL DEFAULT '{}',
  detail text,
  -- The audit run that last saw it (null for an agent report's evaluation).
  run_id uuid,
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  -- Resource first: an audit batch replaces the rows of its resources with one index probe each.
  PRIMARY KEY (workspace_id, resource_id, rule_id)
);
CREATE INDEX evaluation_unknowns_rule_idx ON evaluation_unknowns (workspace_id, rule_id);
