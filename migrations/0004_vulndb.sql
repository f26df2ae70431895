-- Vulnerability intelligence: one global store (no tenant) of the CISA KEV catalog, FIRST EPSS scores,
-- NVD CVE records with their CPE configurations and OSV advisories with their affected package ranges,
-- plus a record of every import and of the configured sync locations.
--
-- Imports never write the live tables while reading a file: records go to the UNLOGGED *_stage tables
-- in short batches under the run's id, and one short transaction applies the whole run to the live
-- tables (src/modules/vulndb/import/apply.ts). A broken file therefore leaves the live data untouched.

CREATE TABLE vulndb_kev (
  cve_id text PRIMARY KEY,
  vendor_project text NOT NULL,
  product text NOT NULL,
  vulnerability_name text NOT NULL,
  date_added date NOT NULL,
  short_description text NOT NULL,
  required_action text NOT NULL,
  due_date date,
  -- 'Known' or 'Unknown', as CISA publishes it.
  known_ransomware_campaign_use text NOT NULL,
  notes text NOT NULL,
  cwes text[] NOT NULL DEFAULT '{}',
  -- Digest of the record's fields: a re-import of an unchanged record writes nothing.
  content_hash text NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX vulndb_kev_date_idx ON vulndb_kev (date_added DESC, cve_id DESC);
CREATE INDEX vulndb_kev_vendor_idx ON vulndb_kev (lower(vendor_project));

CREATE UNLOGGED TABLE vulndb_kev_stage (
  run_id uuid NOT NULL,
  seq integer NOT NULL,
  cve_id text NOT NULL,
  vendor_project text NOT NULL,
  product text NOT NULL,
  vulnerability_name text NOT NULL,
  date_added date NOT NULL,
  short_description text NOT NULL,
  required_action text NOT NULL,
  due_date date,
  known_ransomware_campaign_use text NOT NULL,
  notes text NOT NULL,
  cwes text[] NOT NULL DEFAULT '{}',
  content_hash text NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE vulndb_epss (
  cve_id text PRIMARY KEY,
  epss double precision NOT NULL,
  percentile double precision NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE UNLOGGED TABLE vulndb_epss_stage (
  run_id uuid NOT NULL,
  seq integer NOT NULL,
  cve_id text NOT NULL,
  epss double precision NOT NULL,
  percentile double precision NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- NVD CVE records (CVE API 2.0 / 2.0 feeds).
CREATE TABLE vulndb_cves (
  cve_id text PRIMARY KEY,
  source_identifier text,
  vuln_status text,
  published timestamptz,
  last_modified timestamptz,
  description text,
  cvss_v3_score double precision,
  cvss_v3_severity text,
  cvss_v3_vector text,
  cvss_v4_score double precision,
  cvss_v4_severity text,
  cvss_v2_score double precision,
  cwes text[] NOT NULL DEFAULT '{}',
  reference_urls text[] NOT NULL DEFAULT '{}',
  content_hash text NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE UNLOGGED TABLE vulndb_nvd_stage (
  run_id uuid NOT NULL,
  seq integer NOT NULL,
  cve_id text NOT NULL,
  source_identifier text,
  vuln_status text,
  published timestamptz,
  last_modified timestamptz,
  description text,
  cvss_v3_score double precision,
  cvss_v3_severity text,
  cvss_v3_vector text,
  cvss_v4_score double precision,
  cvss_v4_severity text,
  cvss_v2_score double precision,
  cwes text[] NOT NULL DEFAULT '{}',
  reference_urls text[] NOT NULL DEFAULT '{}',
  content_hash text NOT NULL,
  -- Set while applying: this row is the newest of its CVE in the run and differs from the live one.
  changed boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, seq)
);

-- One row per cpeMatch of a CVE's configurations (configurations[c].nodes[n].cpeMatch[m]), with the
-- CPE 2.3 name split into the fields matching needs.
CREATE TABLE vulndb_cpe_matches (
  cve_id text NOT NULL REFERENCES vulndb_cves (cve_id) ON DELETE CASCADE,
  config_index integer NOT NULL,
  node_index integer NOT NULL,
  match_index integer NOT NULL,
  config_operator text NOT NULL,
  node_operator text NOT NULL,
  negate boolean NOT NULL,
  vulnerable boolean NOT NULL,
  criteria text NOT NULL,
  part text NOT NULL,
  vendor text NOT NULL,
  product text NOT NULL,
  version text NOT NULL,
  cpe_update text NOT NULL,
  target_sw text NOT NULL,
  version_start_including text,
  version_start_excluding text,
  version_end_including text,
  version_end_excluding text,
  PRIMARY KEY (cve_id, config_index, node_index, match_index)
);
CREATE INDEX vulndb_cpe_product_idx ON vulndb_cpe_matches (product, vendor) WHERE vulnerable;

CREATE UNLOGGED TABLE vulndb_cpe_stage (
  run_id uuid NOT NULL,
  seq integer NOT NULL,
  cve_id text NOT NULL,
  config_index integer NOT NULL,
  node_index integer NOT NULL,
  match_index integer NOT NULL,
  config_operator text NOT NULL,
  node_operator text NOT NULL,
  negate boolean NOT NULL,
  vulnerable boolean NOT NULL,
  criteria text NOT NULL,
  part text NOT NULL,
  vendor text NOT NULL,
  product text NOT NULL,
  version text NOT NULL,
  cpe_update text NOT NULL,
  target_sw text NOT NULL,
  version_start_including text,
  version_start_excluding text,
  version_end_including text,
  version_end_excluding text
);
-- No key: rows are only ever read whole by run (joined to their parent's (run_id, seq)).
CREATE INDEX vulndb_cpe_stage_run_idx ON vulndb_cpe_stage (run_id);

-- OSV advisories (GHSA, DSA, Debian/Alpine/Ubuntu CVE records, PYSEC, GO, ...).
CREATE TABLE vulndb_osv_advisories (
  id text PRIMARY KEY,
  modified timestamptz,
  published timestamptz,
  withdrawn timestamptz,
  aliases text[] NOT NULL DEFAULT '{}',
  related text[] NOT NULL DEFAULT '{}',
  -- The CVEs this advisory is about: its own id, its CVE aliases, else its related CVEs.
  cve_ids text[] NOT NULL DEFAULT '{}',
  summary text,
  details text,
  severity jsonb NOT NULL DEFAULT '[]'::jsonb,
  reference_urls text[] NOT NULL DEFAULT '{}',
  content_hash text NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX vulndb_osv_cve_idx ON vulndb_osv_advisories USING gin (cve_ids);

CREATE UNLOGGED TABLE vulndb_osv_stage (
  run_id uuid NOT NULL,
  seq integer NOT NULL,
  id text NOT NULL,
  modified timestamptz,
  published timestamptz,
  withdrawn timestamptz,
  aliases text[] NOT NULL DEFAULT '{}',
  related text[] NOT NULL DEFAULT '{}',
  cve_ids text[] NOT NULL DEFAULT '{}',
  summary text,
  details text,
  severity jsonb NOT NULL DEFAULT '[]'::jsonb,
  reference_urls text[] NOT NULL DEFAULT '{}',
  content_hash text NOT NULL,
  changed boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, seq)
);

-- affected[i] of an advisory: one package of one ecosystem, its non-GIT ranges and listed versions.
CREATE TABLE vulndb_osv_affected (
  advisory_id text NOT NULL REFERENCES vulndb_osv_advisories (id) ON DELETE CASCADE,
  idx integer NOT NULL,
  ecosystem text NOT NULL,
  -- Normalised keys the matcher looks packages up by (see matching/ecosystems.ts).
  ecosystem_key text NOT NULL,
  name text NOT NULL,
  name_key text NOT NULL,
  purl text,
  ranges jsonb NOT NULL DEFAULT '[]'::jsonb,
  versions text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (advisory_id, idx)
);
CREATE INDEX vulndb_osv_package_idx ON vulndb_osv_affected (ecosystem_key, name_key);

CREATE UNLOGGED TABLE vulndb_osv_affected_stage (
  run_id uuid NOT NULL,
  seq integer NOT NULL,
  advisory_id text NOT NULL,
  idx integer NOT NULL,
  ecosystem text NOT NULL,
  ecosystem_key text NOT NULL,
  name text NOT NULL,
  name_key text NOT NULL,
  purl text,
  ranges jsonb NOT NULL DEFAULT '[]'::jsonb,
  versions text[] NOT NULL DEFAULT '{}'
);
CREATE INDEX vulndb_osv_affected_stage_run_idx ON vulndb_osv_affected_stage (run_id);

-- Every import (CLI, seed, scheduled or manual sync), with its counts, or where a broken file broke.
CREATE TABLE vulndb_import_runs (
  id uuid PRIMARY KEY,
  -- Creation order, whatever the clocks say (lists and a job's runs are shown in this order).
  seq bigint GENERATED ALWAYS AS IDENTITY,
  source text NOT NULL CHECK (source IN ('kev', 'epss', 'nvd', 'osv')),
  trigger text NOT NULL CHECK (trigger IN ('cli', 'seed', 'schedule', 'manual')),
  location text NOT NULL,
  job_id uuid,
  status text NOT NULL CHECK (status IN ('running', 'succeeded', 'unchanged', 'failed')),
  started_at timestamptz NOT NULL,
  heartbeat_at timestamptz NOT NULL,
  finished_at timestamptz,
  bytes bigint NOT NULL DEFAULT 0,
  sha256 text,
  records integer NOT NULL DEFAULT 0,
  inserted integer NOT NULL DEFAULT 0,
  updated integer NOT NULL DEFAULT 0,
  deleted integer NOT NULL DEFAULT 0,
  unchanged integer NOT NULL DEFAULT 0,
  findings_escalated integer NOT NULL DEFAULT 0,
  findings_restored integer NOT NULL DEFAULT 0,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  error text,
  -- Where a broken file broke: byte offset in the (decompressed) content, records read before it.
  error_offset bigint,
  error_record integer,
  error_context text
);
CREATE INDEX vulndb_import_runs_seq_idx ON vulndb_import_runs (seq DESC);
CREATE INDEX vulndb_import_runs_source_idx ON vulndb_import_runs (source, seq DESC);
CREATE INDEX vulndb_import_runs_job_idx ON vulndb_import_runs (job_id) WHERE job_id IS NOT NULL;

-- The state of each source: where its live data came from, how much there is, and the last attempt.
CREATE TABLE vulndb_sources (
  source text PRIMARY KEY CHECK (source IN ('kev', 'epss', 'nvd', 'osv')),
  origin text,
  location text,
  record_count integer NOT NULL DEFAULT 0,
  data_version text,
  data_date timestamptz,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  last_run_id uuid,
  last_run_at timestamptz,
  last_status text,
  last_error text,
  last_success_at timestamptz,
  last_success_run_id uuid,
  updated_at timestamptz NOT NULL
);

-- The configured sync locations (CONTROLGRAPH_VULNDB_SOURCES): HTTP validators and the digest of the
-- content last applied, so an unchanged file is neither downloaded nor applied again.
CREATE TABLE vulndb_sync_locations (
  location text PRIMARY KEY,
  source text NOT NULL CHECK (source IN ('kev', 'epss', 'nvd', 'osv')),
  etag text,
  last_modified text,
  sha256 text,
  checked_at timestamptz,
  changed_at timestamptz
);
