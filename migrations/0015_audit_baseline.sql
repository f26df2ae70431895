-- The control state an audit run started from (failing controls and scores), recorded by its first
-- attempt before it writes any finding. A retried attempt (a worker killed mid-audit) compares with
-- it instead of with the findings the killed attempt already committed, so the control and score
-- events of those findings are not lost. NULL until the first attempt starts.
ALTER TABLE audit_runs ADD COLUMN baseline jsonb;
