-- History of the compliance state (issue 23 item 4).
--
-- compliance_history: one row per (workspace, framework or 'overall', kind, point). kind 'run' is the
-- state an audit ended with (point_at: when it ended); kind 'day' is a day's state (point_at: the
-- day's 00:00 UTC), written by the day's audits (the last one wins) and, on a day without an audit,
-- by the hourly history job. Counts by severity are of active findings (open, not accepted); by
-- status: open (= active), accepted (open, under a live acceptance) and resolved. Points older than a
-- year are thinned to the last of each ISO week (per workspace, kind and framework): never all lost.
CREATE TABLE compliance_history (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  framework text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('run', 'day')),
  point_at timestamptz NOT NULL,
  -- When the state was measured (a day point: the audit or job that wrote it last).
  taken_at timestamptz NOT NULL,
  run_id uuid,
  score smallint NOT NULL,
  by_severity jsonb NOT NULL,
  open_findings integer NOT NULL,
  accepted_findings integer NOT NULL,
  resolved_findings integer NOT NULL,
  applicable_controls integer NOT NULL,
  passing_controls integer NOT NULL,
  failing_controls integer NOT NULL,
  unknown_controls integer NOT NULL,
  -- A range of points of one workspace (every framework of a point together) is one index range.
  PRIMARY KEY (workspace_id, kind, point_at, framework)
);
-- Thinning looks for the points older than a year across workspaces.
CREATE INDEX compliance_history_age_idx ON compliance_history (point_at);

-- Findings opened, resolved and reopened per (workspace, UTC day, severity), with the seconds from
-- (re)opening to resolution summed over the day's resolutions (mean time to resolve = resolve_seconds
-- / resolved). Written by the statement-level triggers below in the transaction that changes the
-- findings, whatever writes them (audits, agent syncs, the resolve endpoint, rule deletion). Days are
-- those of the finding's own timestamps (created_at, resolved_at, updated_at on reopening), which
-- come from the service's clock.
--
-- Rows are deltas, only ever inserted: a (workspace, day, severity) may have several, and readers
-- sum them. Two transactions changing findings of one workspace (an audit's two batch writes in
-- flight) then never wait on, or deadlock over, a shared counter row. The hourly history job merges
-- each key's rows into one (history-job.ts), so GET /findings/trend reads a few rows per day.
CREATE TABLE finding_daily_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  day date NOT NULL,
  severity text NOT NULL,
  opened integer NOT NULL DEFAULT 0,
  resolved integer NOT NULL DEFAULT 0,
  reopened integer NOT NULL DEFAULT 0,
  resolve_seconds double precision NOT NULL DEFAULT 0
);
CREATE INDEX finding_daily_counts_day_idx ON finding_daily_counts (workspace_id, day);

-- When a finding open now was last reopened: its time to resolve runs from then, not from its
-- creation. Only reopened findings that are still open have a row.
CREATE TABLE finding_reopenings (
  workspace_id uuid NOT NULL,
  finding_id text NOT NULL,
  reopened_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, finding_id),
  FOREIGN KEY (workspace_id, finding_id) REFERENCES finding_rows (workspace_id, id) ON DELETE CASCADE
);

-- What the findings already hold: each finding opened on its creation day, and each resolved one
-- resolved on its day (earlier reopenings are not known).
INSERT INTO finding_daily_counts (tenant_id, workspace_id, day, severity, opened, resolved, resolve_seconds)
SELECT tenant_id, workspace_id, day, severity, sum(opened)::int, sum(resolved)::int, sum(seconds)
FROM (
  SELECT tenant_id, workspace_id, (created_at AT TIME ZONE 'UTC')::date AS day, severity, 1 AS opened, 0 AS resolved, 0::double precision AS seconds
  FROM finding_rows
  UNION ALL
  SELECT tenant_id, workspace_id, (resolved_at AT TIME ZONE 'UTC')::date, severity, 0, 1, greatest(extract(epoch FROM resolved_at - created_at), 0)
  FROM finding_rows
  WHERE status = 'resolved' AND resolved_at IS NOT NULL
) e
GROUP BY tenant_id, workspace_id, day, severity;

CREATE FUNCTION finding_rows_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO finding_daily_counts (tenant_id, workspace_id, day, severity, opened)
  SELECT n.tenant_id, n.workspace_id, (n.created_at AT TIME ZONE 'UTC')::date, n.severity, count(*)::int
  FROM new_findings n
  WHERE n.status = 'open'
  GROUP BY 1, 2, 3, 4;
  RETURN NULL;
END $$;
CREATE TRIGGER finding_rows_daily_counts_insert
AFTER INSERT ON finding_rows
REFERENCING NEW TABLE AS new_findings
FOR EACH STATEMENT EXECUTE FUNCTION finding_rows_count_inserted();

-- Most updates of findings (an audit stamping last_seen) move no status: one join of the statement's
-- old and new rows finds that, and the rest of the statement has nothing to do. Every part of the
-- statement reads finding_reopenings as it was before it, so a resolution's time runs from the
-- reopening recorded earlier; the parts touch disjoint findings (none both reopens and resolves).
CREATE FUNCTION finding_rows_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH moves AS (
    SELECT n.tenant_id, n.workspace_id, n.id, n.severity, n.status AS to_status, n.created_at, n.updated_at,
      coalesce(n.resolved_at, n.updated_at) AS resolved_at
    FROM new_findings n
    JOIN old_findings o ON o.workspace_id = n.workspace_id AND o.id = n.id
    WHERE o.status IS DISTINCT FROM n.status
  ),
  counted AS (
    INSERT INTO finding_daily_counts (tenant_id, workspace_id, day, severity, resolved, reopened, resolve_seconds)
    SELECT m.tenant_id, m.workspace_id,
      (CASE WHEN m.to_status = 'resolved' THEN m.resolved_at ELSE m.updated_at END AT TIME ZONE 'UTC')::date,
      m.severity,
      count(*) FILTER (WHERE m.to_status = 'resolved')::int,
      count(*) FILTER (WHERE m.to_status = 'open')::int,
      coalesce(sum(greatest(extract(epoch FROM m.resolved_at - coalesce(r.reopened_at, m.created_at)), 0)) FILTER (WHERE m.to_status = 'resolved'), 0)
    FROM moves m
    LEFT JOIN finding_reopenings r ON r.workspace_id = m.workspace_id AND r.finding_id = m.id
    GROUP BY 1, 2, 3, 4
    RETURNING 1
  ),
  cleared AS (
    DELETE FROM finding_reopenings r
    USING moves m
    WHERE m.to_status = 'resolved' AND r.workspace_id = m.workspace_id AND r.finding_id = m.id
    RETURNING 1
  )
  INSERT INTO finding_reopenings (workspace_id, finding_id, reopened_at)
  SELECT m.workspace_id, m.id, m.updated_at FROM moves m WHERE m.to_status = 'open'
  ON CONFLICT (workspace_id, finding_id) DO UPDATE SET reopened_at = EXCLUDED.reopened_at;
  RETURN NULL;
END $$;
CREATE TRIGGER finding_rows_daily_counts_update
AFTER UPDATE ON finding_rows
REFERENCING OLD TABLE AS old_findings NEW TABLE AS new_findings
FOR EACH STATEMENT EXECUTE FUNCTION finding_rows_count_updated();
