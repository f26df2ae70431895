import { Type } from 'typebox';
import { DateOnly, Nullable, PageQuery, Paged, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';

const SOURCE_NAMES = ['kev', 'epss', 'nvd', 'osv'] as const;
export const SourceName = StringEnum(SOURCE_NAMES);
const Score = Type.Number({ minimum: 0, maximum: 1 });

export const CveParams = Type.Object({
  cveId: Type.String({
    pattern: '^[Cc][Vv][Ee]-[0-9]{4}-[0-9]{4,19}$',
    maxLength: 28,
    description: 'A CVE id, CVE-YYYY-NNNN (case-insensitive), e.g. CVE-2021-44228',
  }),
});

const Range = Type.Object({
  type: StringEnum(['ECOSYSTEM', 'SEMVER'] as const),
  events: Type.Array(
    Type.Object({
      introduced: Type.Optional(Type.String()),
      fixed: Type.Optional(Type.String()),
      last_affected: Type.Optional(Type.String()),
      limit: Type.Optional(Type.String()),
    }),
  ),
});

export const VulnerabilityRecord = Type.Object(
  {
    cve_id: Type.String(),
    description: Nullable(Type.String()),
    cvss_v3_score: Nullable(Type.Number()),
    cvss_v3_severity: Nullable(Type.String({ description: 'CRITICAL, HIGH, MEDIUM, LOW or NONE' })),
    cvss_v3_vector: Nullable(Type.String()),
    cvss_v3_source: Nullable(StringEnum(['nvd', 'osv'] as const, { description: 'nvd: the NVD metric; osv: computed from an advisory vector' })),
    cvss_v4_score: Nullable(Type.Number()),
    cvss_v4_severity: Nullable(Type.String()),
    is_kev: Type.Boolean(),
    kev_date_added: Nullable(DateOnly),
    kev_due_date: Nullable(DateOnly),
    kev_vulnerability_name: Nullable(Type.String()),
    kev_required_action: Nullable(Type.String()),
    kev_notes: Nullable(Type.String()),
    known_ransomware_campaign_use: Nullable(StringEnum(['Known', 'Unknown'] as const)),
    epss_score: Nullable(Score),
    epss_percentile: Nullable(Score),
    epss_model_version: Nullable(Type.String()),
    epss_score_date: Nullable(Timestamp),
    vendor_project: Nullable(Type.String()),
    product_name: Nullable(Type.String()),
    references: Type.Array(Type.String()),
    cwes: Type.Array(Type.String()),
    published: Nullable(Timestamp),
    last_modified: Nullable(Timestamp),
    vuln_status: Nullable(Type.String({ description: 'NVD analysis status (Analyzed, Modified, Awaiting Analysis, ...)' })),
    affected_packages: Type.Array(
      Type.Object({
        advisory_id: Type.String(),
        ecosystem: Type.String(),
        name: Type.String(),
        purl: Nullable(Type.String()),
        ranges: Type.Array(Range),
        listed_versions: Type.Integer({ description: 'How many explicit versions the advisory lists' }),
      }),
    ),
    affected_cpes: Type.Array(
      Type.Object({
        criteria: Type.String(),
        version_start_including: Nullable(Type.String()),
        version_start_excluding: Nullable(Type.String()),
        version_end_including: Nullable(Type.String()),
        version_end_excluding: Nullable(Type.String()),
      }),
      { description: 'Vulnerable CPE matches of the NVD configurations (at most 200)' },
    ),
    advisories: Type.Array(Type.Object({ id: Type.String(), summary: Nullable(Type.String()), aliases: Type.Array(Type.String()), modified: Nullable(Timestamp) })),
    sources: Type.Array(SourceName, { description: 'The sources that know this CVE' }),
  },
  { description: 'A CVE combining the KEV catalog, EPSS scores, the NVD record and OSV advisories' },
);

export const CheckQuery = Type.Object(
  {
    epss_threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Override of the EPSS threshold (default 0.1)' })),
  },
  { additionalProperties: false },
);

export const CheckResult = Type.Object({
  cve_id: Type.String(),
  known: Type.Boolean({ description: 'Whether any source knows the CVE' }),
  flagged: Type.Boolean({ description: 'In the KEV catalog, or EPSS score at or above the threshold' }),
  reasons: Type.Array(StringEnum(['known_exploited', 'high_epss'] as const)),
  reason: Type.String({ description: 'The verdict in words' }),
  is_kev: Type.Boolean(),
  kev_date_added: Nullable(DateOnly),
  kev_due_date: Nullable(DateOnly),
  known_ransomware_campaign_use: Nullable(Type.String()),
  epss_score: Nullable(Score),
  epss_percentile: Nullable(Score),
  epss_threshold: Score,
});

export const KevQuery = Type.Object(
  {
    ...PageQuery,
    vendor: Type.Optional(Type.String({ maxLength: 200, description: 'vendorProject, case-insensitive exact match' })),
    product: Type.Optional(Type.String({ maxLength: 200, description: 'product, case-insensitive exact match' })),
    date_added_from: Type.Optional(Type.String({ format: 'date', description: 'dateAdded on or after (YYYY-MM-DD)' })),
    date_added_to: Type.Optional(Type.String({ format: 'date', description: 'dateAdded on or before (YYYY-MM-DD)' })),
    ransomware: Type.Optional(StringEnum(['known', 'unknown'] as const, { description: 'knownRansomwareCampaignUse' })),
    cwe: Type.Optional(Type.String({ pattern: '^CWE-[0-9]+$' })),
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Substring of CVE id, vendor, product, name or description' })),
    sort: Type.Optional(StringEnum(['date_added', '-date_added', 'due_date', '-due_date', 'cve_id', '-cve_id', 'epss', '-epss'] as const, { default: '-date_added' })),
  },
  { additionalProperties: false },
);

export const KevEntry = Type.Object({
  cve_id: Type.String(),
  vendor_project: Type.String(),
  product: Type.String(),
  vulnerability_name: Type.String(),
  date_added: DateOnly,
  due_date: Nullable(DateOnly),
  short_description: Type.String(),
  required_action: Type.String(),
  known_ransomware_campaign_use: Type.String(),
  notes: Type.String(),
  cwes: Type.Array(Type.String()),
  epss_score: Nullable(Score),
  epss_percentile: Nullable(Score),
});
export const KevPage = Paged(KevEntry);

const SourceState = Type.Object({
  source: SourceName,
  records: Type.Integer(),
  origin: Nullable(StringEnum(['cli', 'seed', 'schedule', 'manual', 'api'] as const, { description: 'How the live data got here' })),
  location: Nullable(Type.String()),
  data_version: Nullable(Type.String({ description: 'KEV catalogVersion, EPSS model version, NVD API version' })),
  data_date: Nullable(Timestamp),
  data_age_seconds: Nullable(Type.Integer({ description: 'Now minus the data date (or the last successful import)' })),
  last_success_at: Nullable(Timestamp),
  last_sync_at: Nullable(Timestamp),
  last_result: Nullable(StringEnum(['queued', 'running', 'succeeded', 'unchanged', 'failed'] as const)),
  last_error: Nullable(Type.String()),
  last_run_id: Nullable(Uuid),
});

export const Stats = Type.Object({
  generated_at: Timestamp,
  sources: Type.Array(SourceState),
  counts: Type.Object({
    kev: Type.Integer(),
    epss: Type.Integer(),
    nvd_cves: Type.Integer(),
    cpe_matches: Type.Integer(),
    osv_advisories: Type.Integer(),
    osv_affected_packages: Type.Integer(),
  }),
  package_matching: Type.Object(
    {
      enabled: Type.Boolean({ description: 'false when no package advisories (OSV) are loaded: installed packages are then not checked at all' }),
      message: Nullable(Type.String({ description: 'What is missing and how to load it; null when enabled' })),
    },
    { description: 'Whether host and SBOM packages can be matched against advisories' },
  ),
  epss_threshold: Score,
  sync: Type.Object({
    configured: Type.Array(Type.Object({ source: SourceName, location: Type.String() })),
    interval_seconds: Type.Integer(),
    next_run_at: Nullable(Timestamp),
  }),
});

export const SyncQuery = Type.Object(
  { source: Type.Optional(Type.Array(SourceName, { description: 'Only these sources (repeat or comma-free list); all configured by default' })) },
  { additionalProperties: false },
);

export const SyncAccepted = Type.Object({
  job_id: Uuid,
  status: StringEnum(['queued', 'running'] as const),
  status_url: Type.String(),
  already_active: Type.Boolean(),
  sources: Type.Array(Type.Object({ source: SourceName, location: Type.String() })),
});

const IMPORT_STATUSES = ['queued', 'running', 'succeeded', 'unchanged', 'failed', 'cancelled'] as const;

export const ImportRun = Type.Object({
  id: Uuid,
  source: Nullable(StringEnum(SOURCE_NAMES, { description: 'null while an API import is queued and its content not yet read' })),
  trigger: StringEnum(['cli', 'seed', 'schedule', 'manual', 'api'] as const, { description: 'api: POST /vulndb/imports' }),
  location: Type.String({ description: 'The file, directory or URL; an upload is upload:<file name>' }),
  job_id: Nullable(Uuid),
  status: StringEnum(IMPORT_STATUSES, {
    description: 'queued (an API import waiting for a worker), running, then succeeded, unchanged, failed or cancelled (an API import cancelled before it was applied)',
  }),
  started_at: Timestamp,
  finished_at: Nullable(Timestamp),
  bytes: Type.Integer({ description: 'Bytes read (as uploaded or downloaded, before decompression); updated while it runs' }),
  size_bytes: Nullable(Type.Integer({ description: 'The size of an upload (bytes / size_bytes is the progress); null otherwise' })),
  sha256: Nullable(Type.String()),
  records: Type.Integer({ description: 'Records read; updated while it runs' }),
  inserted: Type.Integer(),
  updated: Type.Integer(),
  deleted: Type.Integer(),
  unchanged: Type.Integer(),
  findings_escalated: Type.Integer(),
  findings_restored: Type.Integer(),
  requested_by: Nullable(Type.String({ description: 'The actor who asked for an API import' })),
  error: Nullable(Type.String({ description: 'Why the import failed: an import stops at its first error and changes nothing' })),
  error_offset: Nullable(Type.Integer({ description: 'Byte offset (of the decompressed content) reached when the file broke' })),
  error_record: Nullable(Type.Integer({ description: 'Records read before the error' })),
  error_context: Nullable(Type.String()),
});

export const ImportsQuery = Type.Object(
  {
    ...PageQuery,
    source: Type.Optional(SourceName),
    status: Type.Optional(StringEnum(IMPORT_STATUSES)),
  },
  { additionalProperties: false },
);

export const ImportParams = Type.Object({ importId: Uuid });

export const ImportUrlBody = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048, description: 'An https URL of a KEV, EPSS, NVD or OSV file (gzip accepted), fetched through the outbound policy' })),
    source: Type.Optional(SourceName),
  },
  { additionalProperties: false, description: 'application/json {url, source?}; or multipart/form-data: a field source (optional) and one or more file parts' },
);

export const SyncJobParams = Type.Object({ jobId: Uuid });

export const SyncJob = Type.Object({
  job_id: Uuid,
  kind: Type.String(),
  status: StringEnum(['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const),
  attempts: Type.Integer(),
  max_attempts: Type.Integer(),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  error: Nullable(Type.String()),
  runs: Type.Array(ImportRun),
});
