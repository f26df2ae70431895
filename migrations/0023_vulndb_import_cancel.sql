-- An API import can be cancelled (POST /api/v1/vulndb/imports/{id}/cancel): its run ends `cancelled`,
-- the live data unchanged.
ALTER TABLE vulndb_import_runs DROP CONSTRAINT vulndb_import_runs_status_check;
ALTER TABLE vulndb_import_runs ADD CONSTRAINT vulndb_import_runs_status_check CHECK (status IN ('queued', 'running', 'succeeded', 'unchanged', 'failed', 'cancelled'));
-- The staging id of the attempt carrying out an API import. Each attempt of its job stages under a new
-- id and writes the run only while it is still this one: an attempt whose worker lost its lease (or was
-- stopped) can neither apply, record an outcome, nor remove the rows of the attempt that took over.
-- Null for runs staged under their own id (CLI, sync, seed: one attempt per run).
ALTER TABLE vulndb_import_runs ADD COLUMN stage_id uuid;
