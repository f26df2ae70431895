-- The read model of findings (issue 23 item 1): counts that /controls/status, /controls/gaps,
-- /findings/grouped, the reports and the findings totals read instead of every finding.
--
-- Statement-level triggers with transition tables keep them in the same transaction as every write
-- of finding_rows and evaluation_unknowns, whichever code path writes (audit batches, agent syncs,
-- resolve, reopen, acceptances through accepted_until, KEV raising a severity, deletions): one
-- grouped upsert per statement, not one per row. Each statement adds the rows it wrote (+1) and takes
-- away the rows it replaced (-1), so an update that moves no count (last_seen) writes nothing.
--
-- A finding's state here is 'open' (active: open and not covered by an acceptance), 'accepted'
-- (open, accepted_until set) or 'resolved'. An acceptance that expired before the sweeper recorded it
-- is still 'accepted' here: readers move those few findings (finding_rows_accepted_idx) back to
-- active, so expiry applies at its exact moment (see rollups/active-rollup.ts).
--
-- Zero rows are left in place (a count that went back to 0) and skipped by readers.
-- `controlgraph check` and the consistency test recompute every count from the rows and compare.

CREATE TABLE finding_rollup (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  rule_id text NOT NULL,
  framework text NOT NULL,
  control_id text NOT NULL,
  text_id text NOT NULL,
  severity_rank smallint NOT NULL,
  state text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (workspace_id, rule_id, framework, control_id, text_id, severity_rank, state)
);

CREATE TABLE finding_group_rollup (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  group_id text NOT NULL,
  severity_rank smallint NOT NULL,
  state text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (workspace_id, group_id, severity_rank, state)
);

CREATE TABLE unknown_rollup (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  rule_id text NOT NULL,
  framework text NOT NULL,
  control_id text NOT NULL,
  text_id text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (workspace_id, rule_id, framework, control_id, text_id)
);

-- Unknown evaluations per resource, and per workspace the number of resources with at least one:
-- the distinct count /controls/status shows, without counting distinct resources on each request.
CREATE TABLE unknown_resource_rollup (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  resource_id text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (workspace_id, resource_id)
);
-- Finds the rows the trigger deletes after each statement without reading the others.
CREATE INDEX unknown_resource_rollup_zero_idx ON unknown_resource_rollup (workspace_id) WHERE n = 0;
CREATE TABLE unknown_workspace_rollup (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  resources bigint NOT NULL
);

-- The page of /findings/grouped reads its groups' details (first and last seen, the first 20
-- resources, the first resource's columns) from this index alone: by group, status and resource,
-- carrying what the status filter and the dates need. Before, every finding of the page's groups was
-- read from the table (most of the workspace's findings: the page holds its largest groups).
-- last_seen in an index costs a non-HOT update when an audit sees a failing resource again; audits
-- evaluate again only the resources that changed (migration 0031), so that is rare.
DROP INDEX findings_group_idx;
CREATE INDEX findings_group_idx ON finding_rows (workspace_id, group_id, status, resource_id)
  INCLUDE (severity_rank, accepted_until, first_seen, last_seen);

-- The ranking of root-cause groups (highest severity, then most findings) per state, kept with the
-- per-severity group counts: the first page of /findings/grouped is an index range, not an
-- aggregate over every group (63,582 groups at 118,761 findings: 226 ms). Rows of groups with no
-- finding left in a state stay with findings 0 and top NULL, outside the index.
CREATE TABLE finding_group_rank (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  state text NOT NULL,
  group_id text NOT NULL,
  top smallint,
  findings bigint NOT NULL,
  PRIMARY KEY (workspace_id, state, group_id)
);
CREATE INDEX finding_group_rank_order_idx ON finding_group_rank (workspace_id, state, top DESC, findings DESC, group_id) WHERE findings > 0;

-- How many groups have findings in each state: the page's total, without counting them.
CREATE TABLE finding_group_totals (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  state text NOT NULL,
  groups bigint NOT NULL,
  PRIMARY KEY (workspace_id, state)
);

-- /controls/status counts the active findings overdue or due within a day: from the due index alone
-- (accepted_until, which the active test reads, carried in it), not from every such finding's row.
DROP INDEX finding_rows_due_idx;
CREATE INDEX finding_rows_due_idx ON finding_rows (workspace_id, due_at) INCLUDE (accepted_until) WHERE status = 'open' AND due_at IS NOT NULL;

-- The rows a statement wrote and replaced, as one signed set (the transition tables of the event).
CREATE FUNCTION rollup_changes_sql(op text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE op
    WHEN 'INSERT' THEN 'SELECT r.*, 1 AS d FROM new_rows r'
    WHEN 'DELETE' THEN 'SELECT r.*, -1 AS d FROM old_rows r'
    ELSE 'SELECT r.*, 1 AS d FROM new_rows r UNION ALL SELECT r.*, -1 AS d FROM old_rows r'
  END
$$;

CREATE FUNCTION finding_rows_rollup() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  -- Rows of a workspace being deleted are skipped: its rollups go with it (ON DELETE CASCADE).
  -- Keys are upserted in order, so two writers of one workspace lock rollup rows in the same order.
  EXECUTE format($q$
    WITH c AS (%s),
    k AS (
      SELECT c.workspace_id, c.rule_id, c.framework, c.control_id, c.text_id, c.severity_rank, c.group_id, c.d,
        CASE WHEN c.status = 'resolved' THEN 'resolved' WHEN c.accepted_until IS NOT NULL THEN 'accepted' ELSE 'open' END AS state
      FROM c
      WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = c.workspace_id)
    ),
    by_control AS (
      INSERT INTO finding_rollup AS t (workspace_id, rule_id, framework, control_id, text_id, severity_rank, state, n)
      SELECT workspace_id, rule_id, framework, control_id, text_id, severity_rank, state, sum(d)
      FROM k
      GROUP BY workspace_id, rule_id, framework, control_id, text_id, severity_rank, state
      HAVING sum(d) <> 0
      ORDER BY workspace_id, rule_id, framework, control_id, text_id, severity_rank, state
      ON CONFLICT (workspace_id, rule_id, framework, control_id, text_id, severity_rank, state) DO UPDATE SET n = t.n + excluded.n
    )
    INSERT INTO finding_group_rollup AS t (workspace_id, group_id, severity_rank, state, n)
    SELECT workspace_id, group_id, severity_rank, state, sum(d)
    FROM k
    GROUP BY workspace_id, group_id, severity_rank, state
    HAVING sum(d) <> 0
    ORDER BY workspace_id, group_id, severity_rank, state
    ON CONFLICT (workspace_id, group_id, severity_rank, state) DO UPDATE SET n = t.n + excluded.n
  $q$, rollup_changes_sql(TG_OP));
  -- Then the ranking of the groups whose counts moved: a second statement, as the first one's upserts
  -- are visible only after it.
  EXECUTE format($q$
    WITH c AS (%s),
    moved AS (
      SELECT c.workspace_id, c.group_id,
        CASE WHEN c.status = 'resolved' THEN 'resolved' WHEN c.accepted_until IS NOT NULL THEN 'accepted' ELSE 'open' END AS state
      FROM c
      WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = c.workspace_id)
      GROUP BY 1, 2, 3, c.severity_rank
      HAVING sum(c.d) <> 0
    ),
    touched AS (SELECT DISTINCT workspace_id, group_id, state FROM moved),
    ranked AS (
      SELECT m.workspace_id, m.state, m.group_id, max(r.severity_rank) FILTER (WHERE r.n > 0) AS top, coalesce(sum(r.n), 0) AS findings,
        coalesce((SELECT g.findings FROM finding_group_rank g WHERE g.workspace_id = m.workspace_id AND g.state = m.state AND g.group_id = m.group_id), 0) AS before
      FROM touched m
      LEFT JOIN finding_group_rollup r ON r.workspace_id = m.workspace_id AND r.group_id = m.group_id AND r.state = m.state
      GROUP BY m.workspace_id, m.state, m.group_id
    ),
    stored AS (
      INSERT INTO finding_group_rank AS t (workspace_id, state, group_id, top, findings)
      SELECT workspace_id, state, group_id, top, findings FROM ranked
      ORDER BY workspace_id, state, group_id
      ON CONFLICT (workspace_id, state, group_id) DO UPDATE SET top = excluded.top, findings = excluded.findings
    )
    -- A group enters a state's count when its findings there leave 0, and leaves it when they return.
    INSERT INTO finding_group_totals AS t (workspace_id, state, groups)
    SELECT workspace_id, state, sum(CASE WHEN findings > 0 AND before <= 0 THEN 1 WHEN findings <= 0 AND before > 0 THEN -1 ELSE 0 END)
    FROM ranked
    GROUP BY workspace_id, state
    ORDER BY workspace_id, state
    ON CONFLICT (workspace_id, state) DO UPDATE SET groups = t.groups + excluded.groups
  $q$, rollup_changes_sql(TG_OP));
  RETURN NULL;
END $fn$;

CREATE TRIGGER finding_rows_rollup_insert AFTER INSERT ON finding_rows
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_rows_rollup();
CREATE TRIGGER finding_rows_rollup_update AFTER UPDATE ON finding_rows
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_rows_rollup();
CREATE TRIGGER finding_rows_rollup_delete AFTER DELETE ON finding_rows
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_rows_rollup();

CREATE FUNCTION evaluation_unknowns_rollup() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  EXECUTE format($q$
    WITH c AS (%s),
    k AS (SELECT c.* FROM c WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = c.workspace_id)),
    by_rule AS (
      INSERT INTO unknown_rollup AS t (workspace_id, rule_id, framework, control_id, text_id, n)
      SELECT workspace_id, rule_id, framework, control_id, text_id, sum(d)
      FROM k
      GROUP BY workspace_id, rule_id, framework, control_id, text_id
      HAVING sum(d) <> 0
      ORDER BY workspace_id, rule_id, framework, control_id, text_id
      ON CONFLICT (workspace_id, rule_id, framework, control_id, text_id) DO UPDATE SET n = t.n + excluded.n
    ),
    per_resource AS (
      SELECT workspace_id, resource_id, sum(d) AS d FROM k GROUP BY workspace_id, resource_id HAVING sum(d) <> 0
    ),
    moved AS (
      INSERT INTO unknown_resource_rollup AS t (workspace_id, resource_id, n)
      SELECT workspace_id, resource_id, d FROM per_resource ORDER BY workspace_id, resource_id
      ON CONFLICT (workspace_id, resource_id) DO UPDATE SET n = t.n + excluded.n
      RETURNING t.workspace_id, t.resource_id, t.n
    )
    -- A resource counts while it has an unknown evaluation: +1 when its count leaves 0, -1 when it returns.
    INSERT INTO unknown_workspace_rollup AS t (workspace_id, resources)
    SELECT m.workspace_id, sum(CASE WHEN m.n > 0 AND m.n - p.d <= 0 THEN 1 WHEN m.n <= 0 AND m.n - p.d > 0 THEN -1 ELSE 0 END)
    FROM moved m JOIN per_resource p ON p.workspace_id = m.workspace_id AND p.resource_id = m.resource_id
    GROUP BY m.workspace_id
    ORDER BY m.workspace_id
    ON CONFLICT (workspace_id) DO UPDATE SET resources = t.resources + excluded.resources
  $q$, rollup_changes_sql(TG_OP));
  -- Resources back to no unknown evaluation leave the per-resource table (it holds only current ones).
  DELETE FROM unknown_resource_rollup WHERE n = 0;
  RETURN NULL;
END $fn$;

CREATE TRIGGER evaluation_unknowns_rollup_insert AFTER INSERT ON evaluation_unknowns
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION evaluation_unknowns_rollup();
CREATE TRIGGER evaluation_unknowns_rollup_update AFTER UPDATE ON evaluation_unknowns
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION evaluation_unknowns_rollup();
CREATE TRIGGER evaluation_unknowns_rollup_delete AFTER DELETE ON evaluation_unknowns
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION evaluation_unknowns_rollup();

-- Rows already stored.
INSERT INTO finding_rollup (workspace_id, rule_id, framework, control_id, text_id, severity_rank, state, n)
SELECT workspace_id, rule_id, framework, control_id, text_id, severity_rank,
  CASE WHEN status = 'resolved' THEN 'resolved' WHEN accepted_until IS NOT NULL THEN 'accepted' ELSE 'open' END, count(*)
FROM finding_rows GROUP BY 1, 2, 3, 4, 5, 6, 7;
INSERT INTO finding_group_rollup (workspace_id, group_id, severity_rank, state, n)
SELECT workspace_id, group_id, severity_rank,
  CASE WHEN status = 'resolved' THEN 'resolved' WHEN accepted_until IS NOT NULL THEN 'accepted' ELSE 'open' END, count(*)
FROM finding_rows GROUP BY 1, 2, 3, 4;
INSERT INTO unknown_rollup (workspace_id, rule_id, framework, control_id, text_id, n)
SELECT workspace_id, rule_id, framework, control_id, text_id, count(*) FROM evaluation_unknowns GROUP BY 1, 2, 3, 4, 5;
INSERT INTO unknown_resource_rollup (workspace_id, resource_id, n)
SELECT workspace_id, resource_id, count(*) FROM evaluation_unknowns GROUP BY 1, 2;
INSERT INTO unknown_workspace_rollup (workspace_id, resources)
SELECT workspace_id, count(*) FROM unknown_resource_rollup GROUP BY 1;
INSERT INTO finding_group_rank (workspace_id, state, group_id, top, findings)
SELECT workspace_id, state, group_id, max(severity_rank) FILTER (WHERE n > 0), sum(n)
FROM finding_group_rollup GROUP BY 1, 2, 3;
INSERT INTO finding_group_totals (workspace_id, state, groups)
SELECT workspace_id, state, count(*) FROM finding_group_rank WHERE findings > 0 GROUP BY 1, 2;
