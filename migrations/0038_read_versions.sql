-- Read versions (issue 23): a counter per workspace and per tenant, raised in the same transaction as
-- any write to a table the dashboards read (findings, their texts and read model, unknowns,
-- acceptances, attestations, questionnaires, POA&M, business services, history, settings, custom
-- rules). A process keeps a dashboard answer for as long as the sum of its workspace's and tenant's
-- counters is the one it was computed under (platform/http/read-cache.ts): one primary-key read
-- instead of the whole computation, and never an answer older than the last committed write.
CREATE TABLE read_versions (
  -- A workspace id or a tenant id (uuids do not collide).
  scope_id uuid PRIMARY KEY,
  version bigint NOT NULL
);

-- Statement-level with transition tables: one upsert per statement and scope, whatever the number
-- of rows (an audit batch writes hundreds). Scopes are raised in id order so that two statements
-- raising the same scopes lock them in the same order.
CREATE FUNCTION raise_read_versions() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  scope_column text := TG_ARGV[0];
  changed text;
BEGIN
  changed := CASE TG_OP
    WHEN 'INSERT' THEN format('SELECT %I AS id FROM new_rows', scope_column)
    WHEN 'DELETE' THEN format('SELECT %I AS id FROM old_rows', scope_column)
    ELSE format('SELECT %1$I AS id FROM new_rows UNION SELECT %1$I FROM old_rows', scope_column)
  END;
  EXECUTE format($q$
    INSERT INTO read_versions AS v (scope_id, version)
    SELECT DISTINCT id, 1 FROM (%s) AS c WHERE id IS NOT NULL ORDER BY id
    ON CONFLICT (scope_id) DO UPDATE SET version = v.version + 1
  $q$, changed);
  RETURN NULL;
END $fn$;

DO $do$
DECLARE
  target record;
BEGIN
  FOR target IN
    SELECT * FROM (VALUES
      ('finding_rows', 'workspace_id'),
      ('finding_texts', 'workspace_id'),
      ('evaluation_unknowns', 'workspace_id'),
      ('finding_rollup', 'workspace_id'),
      ('finding_group_rollup', 'workspace_id'),
      ('finding_group_rank', 'workspace_id'),
      ('finding_group_totals', 'workspace_id'),
      ('unknown_rollup', 'workspace_id'),
      ('unknown_resource_rollup', 'workspace_id'),
      ('unknown_workspace_rollup', 'workspace_id'),
      ('finding_daily_counts', 'workspace_id'),
      ('compliance_history', 'workspace_id'),
      ('risk_acceptances', 'workspace_id'),
      ('control_attestations', 'workspace_id'),
      ('questionnaires', 'workspace_id'),
      ('questionnaire_controls', 'workspace_id'),
      ('assessments', 'workspace_id'),
      ('poam_items', 'workspace_id'),
      ('business_services', 'workspace_id'),
      ('compliance_settings', 'tenant_id'),
      ('finding_sla_settings', 'tenant_id'),
      ('custom_rules', 'tenant_id')
    ) AS t (name, scope_column)
  LOOP
    EXECUTE format('CREATE TRIGGER %1$s_read_version_insert AFTER INSERT ON %1$I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION raise_read_versions(%2$L)', target.name, target.scope_column);
    EXECUTE format('CREATE TRIGGER %1$s_read_version_update AFTER UPDATE ON %1$I REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION raise_read_versions(%2$L)', target.name, target.scope_column);
    EXECUTE format('CREATE TRIGGER %1$s_read_version_delete AFTER DELETE ON %1$I REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION raise_read_versions(%2$L)', target.name, target.scope_column);
  END LOOP;
END $do$;
