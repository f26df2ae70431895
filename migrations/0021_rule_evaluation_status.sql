-- How each rule fares in a tenant's audits (README, Compliance, "Rule budget"): the last run that
-- evaluated it, in how many consecutive runs it exceeded its evaluation budget, and whether it is
-- suspended. Only custom rules are suspended; audits skip a suspended rule until it is updated (an
-- update deletes its row: the rule starts afresh). Built-in rules get a row for their last run too.
CREATE TABLE rule_evaluation_status (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  rule_id text NOT NULL,
  state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'suspended')),
  budget_exceeded_runs integer NOT NULL DEFAULT 0,
  -- {run_id, workspace_id, at, evaluations, errors, budget_exceeded, stopped, error: {resource_id, message}}
  last_run jsonb,
  suspended_at timestamptz,
  suspended_reason text,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, rule_id)
);
