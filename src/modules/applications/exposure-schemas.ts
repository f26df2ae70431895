import { Type } from 'typebox';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { CRITICALITIES } from './tables.js';

/** A CycloneDX 1.5 JSON document (validated against the official schema in the tests). */
export const SbomDocument = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: 'CycloneDX 1.5 JSON (application/vnd.cyclonedx+json; version=1.5) or SPDX 2.3 JSON (application/spdx+json)',
});

export const CveExposureQuery = Type.Object({
  kev: Type.Optional(Type.Boolean({ description: 'only CVEs in the known-exploited catalog' })),
  min_score: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

const Severity = StringEnum(['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const);

export const CveExposureItem = Type.Object({
  cve_id: Type.String(),
  risk_score: Type.Integer({ description: '0-100, the risk score of findings (severity, KEV, EPSS, Internet exposure, service criticality)' }),
  risk_factors: Type.Object({ severity: Type.Integer(), kev: Type.Integer(), epss: Type.Integer(), exposure: Type.Integer(), criticality: Type.Integer() }),
  severity: Severity,
  is_kev: Type.Boolean(),
  kev_date_added: Nullable(Type.String()),
  kev_due_date: Nullable(Type.String()),
  known_ransomware_campaign_use: Type.Boolean(),
  epss_score: Nullable(Type.Number()),
  epss_percentile: Nullable(Type.Number()),
  cvss_v3_score: Nullable(Type.Number()),
  cvss_v3_severity: Nullable(Type.String()),
  description: Nullable(Type.String()),
  exposed: Type.Boolean({ description: 'an affected resource is reachable from the Internet' }),
  sources: Type.Array(StringEnum(['finding', 'package'] as const)),
  resources: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), type: Type.String() })),
  packages: Type.Array(
    Type.Object({
      name: Type.String(),
      version: Type.String(),
      purl: Type.String(),
      host_id: Type.String(),
      advisories: Type.Array(Type.String()),
      fixed_versions: Type.Array(Type.String()),
    }),
  ),
  finding_ids: Type.Array(Type.String()),
});

export const CveExposure = Type.Object({
  service: Type.Object({ id: Uuid, name: Type.String(), criticality: StringEnum(CRITICALITIES) }),
  generated_at: Timestamp,
  hosts: Type.Integer({ description: 'hosts with agent data' }),
  packages: Type.Integer({ description: 'packages on those hosts' }),
  summary: Type.Object({
    cves: Type.Integer(),
    kev: Type.Integer(),
    high_epss: Type.Integer({ description: 'EPSS at or above the vulnerability store threshold (0.1)' }),
    exposed: Type.Integer(),
  }),
  items: Type.Array(CveExposureItem),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
  total_pages: Type.Integer(),
});
