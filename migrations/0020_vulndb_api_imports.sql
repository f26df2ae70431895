-- Imports through the API (POST /api/v1/vulndb/imports): the run exists from the moment the upload or
-- the URL is accepted (status queued, trigger api), before a worker has read enough to know its source.
ALTER TABLE vulndb_import_runs ALTER COLUMN source DROP NOT NULL;
ALTER TABLE vulndb_import_runs DROP CONSTRAINT vulndb_import_runs_trigger_check;
ALTER TABLE vulndb_import_runs ADD CONSTRAINT vulndb_import_runs_trigger_check CHECK (trigger IN ('cli', 'seed', 'schedule', 'manual', 'api'));
ALTER TABLE vulndb_import_runs DROP CONSTRAINT vulndb_import_runs_status_check;
ALTER TABLE vulndb_import_runs ADD CONSTRAINT vulndb_import_runs_status_check CHECK (status IN ('queued', 'running', 'succeeded', 'unchanged', 'failed'));
-- The size of an upload (known before it is read), so that bytes read shows how far the import is.
ALTER TABLE vulndb_import_runs ADD COLUMN size_bytes bigint;
-- Who asked for it (the actor's id; null for the CLI, the scheduler and the seed).
ALTER TABLE vulndb_import_runs ADD COLUMN requested_by text;
