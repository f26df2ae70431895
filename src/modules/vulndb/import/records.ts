import { createHash } from 'node:crypto';
import { ecosystemInfo, packageKey } from '../matching/ecosystems.js';
import { parseCpe } from '../matching/cpe.js';
import type { CpeColumns, CveColumns, KevColumns, StoredRange } from '../tables.js';

/**
 * The rows each source's records become, normalised from the published formats. Pure functions:
 * a record that cannot be used throws a RecordError naming the problem.
 */
export class RecordError extends Error {
  override name = 'RecordError';
}

export const CVE_ID = /^CVE-\d{4}-\d{4,19}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function digest(value: unknown): string {
  return createHash('sha1').update(JSON.stringify(value)).digest('hex');
}

const str = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value));
const optional = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const unique = <T>(values: T[]): T[] => [...new Set(values)];

/** NVD timestamps carry no zone and are UTC. */
function utc(value: unknown): string | null {
  if (typeof value !== 'string' || !value) return null;
  const withZone = /(Z|[+-]\d{2}:?\d{2})$/.test(value) ? value : `${value}Z`;
  return Number.isNaN(Date.parse(withZone)) ? null : new Date(withZone).toISOString();
}

// ---------------------------------------------------------------------------------------------- KEV

/** The stored columns as they are: a KEV record needs no conversion. */
export type KevRow = KevColumns;

/** A KEV catalog entry, from the JSON (`cwes` an array) or the CSV (`cwes` "CWE-1, CWE-2"). */
export function kevRow(record: Record<string, unknown>): KevRow {
  const cveId = str(record.cveID).trim();
  if (!CVE_ID.test(cveId)) throw new RecordError(`invalid cveID "${cveId}"`);
  const dateAdded = str(record.dateAdded).trim();
  if (!DATE.test(dateAdded)) throw new RecordError(`${cveId}: invalid dateAdded "${dateAdded}"`);
  const dueDate = str(record.dueDate).trim();
  if (dueDate && !DATE.test(dueDate)) throw new RecordError(`${cveId}: invalid dueDate "${dueDate}"`);
  const rawCwes = Array.isArray(record.cwes) ? record.cwes.map(str) : str(record.cwes).split(',');
  const fields = {
    cve_id: cveId,
    vendor_project: str(record.vendorProject),
    product: str(record.product),
    vulnerability_name: str(record.vulnerabilityName),
    date_added: dateAdded,
    short_description: str(record.shortDescription),
    required_action: str(record.requiredAction),
    due_date: dueDate || null,
    known_ransomware_campaign_use: str(record.knownRansomwareCampaignUse) || 'Unknown',
    notes: str(record.notes),
    cwes: unique(rawCwes.map((c) => c.trim()).filter(Boolean)),
  };
  return { ...fields, content_hash: digest(fields) };
}

// --------------------------------------------------------------------------------------------- EPSS

export interface EpssRow {
  cve_id: string;
  epss: number;
  percentile: number;
}

export function epssRow(record: Record<string, unknown>): EpssRow {
  const cveId = str(record.cve).trim();
  if (!CVE_ID.test(cveId)) throw new RecordError(`invalid cve "${cveId}"`);
  const epss = Number(str(record.epss).trim());
  const percentile = Number(str(record.percentile).trim());
  if (str(record.epss).trim() === '' || !Number.isFinite(epss) || epss < 0 || epss > 1) throw new RecordError(`${cveId}: invalid epss "${str(record.epss)}"`);
  if (str(record.percentile).trim() === '' || !Number.isFinite(percentile) || percentile < 0 || percentile > 1) {
    throw new RecordError(`${cveId}: invalid percentile "${str(record.percentile)}"`);
  }
  return { cve_id: cveId, epss, percentile };
}

/** `#model_version:v2023.03.01,score_date:2023-04-10T00:00:00+0000` */
export function parseEpssComment(line: string): { model_version: string | null; score_date: string | null } {
  const fields = Object.fromEntries(
    line
      .replace(/^#/, '')
      .split(',')
      .map((part) => {
        const colon = part.indexOf(':');
        return colon < 0 ? [part.trim(), ''] : [part.slice(0, colon).trim(), part.slice(colon + 1).trim()];
      }),
  ) as Record<string, string>;
  const date = fields.score_date ? fields.score_date.replace(/([+-]\d{2})(\d{2})$/, '$1:$2') : '';
  return {
    model_version: fields.model_version || null,
    score_date: date && !Number.isNaN(Date.parse(date)) ? new Date(date).toISOString() : null,
  };
}

// ---------------------------------------------------------------------------------------------- NVD

/** The stored columns, but with timestamps as the ISO strings the importer writes. */
export type CveRow = Omit<CveColumns, 'published' | 'last_modified'> & { published: string | null; last_modified: string | null };

export type CpeRow = CpeColumns;

type Json = Record<string, any>;

/** The NVD's own metric first ("Primary"), else the first one given. */
function primaryMetric(list: unknown): Json | null {
  if (!Array.isArray(list) || list.length === 0) return null;
  return (list as Json[]).find((m) => m.type === 'Primary') ?? (list[0] as Json);
}

/** One `vulnerabilities[].cve` of the NVD CVE API 2.0 into its row and its CPE matches. */
export function nvdRows(cve: Json): { cve: CveRow; cpes: CpeRow[] } {
  const cveId = str(cve?.id).trim();
  if (!CVE_ID.test(cveId)) throw new RecordError(`invalid cve.id "${cveId}"`);
  const descriptions = Array.isArray(cve.descriptions) ? (cve.descriptions as Json[]) : [];
  const description = descriptions.find((d) => d.lang === 'en')?.value ?? descriptions[0]?.value ?? null;
  const metrics = (cve.metrics ?? {}) as Json;
  const v3 = primaryMetric(metrics.cvssMetricV31) ?? primaryMetric(metrics.cvssMetricV30);
  const v4 = primaryMetric(metrics.cvssMetricV40);
  const v2 = primaryMetric(metrics.cvssMetricV2);
  const num = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : null);
  const weaknesses = Array.isArray(cve.weaknesses) ? (cve.weaknesses as Json[]) : [];
  const cwes = unique(weaknesses.flatMap((w) => (Array.isArray(w.description) ? (w.description as Json[]) : []).map((d) => str(d.value))).filter((v) => /^CWE-\d+$/.test(v)));
  const references = Array.isArray(cve.references) ? (cve.references as Json[]) : [];
  const fields = {
    cve_id: cveId,
    source_identifier: optional(cve.sourceIdentifier),
    vuln_status: optional(cve.vulnStatus),
    published: utc(cve.published),
    last_modified: utc(cve.lastModified),
    description: typeof description === 'string' ? description : null,
    cvss_v3_score: num(v3?.cvssData?.baseScore),
    cvss_v3_severity: optional(v3?.cvssData?.baseSeverity ?? v3?.baseSeverity),
    cvss_v3_vector: optional(v3?.cvssData?.vectorString),
    cvss_v4_score: num(v4?.cvssData?.baseScore),
    cvss_v4_severity: optional(v4?.cvssData?.baseSeverity),
    cvss_v2_score: num(v2?.cvssData?.baseScore),
    cwes,
    reference_urls: unique(references.map((r) => str(r.url)).filter(Boolean)),
  };
  const cpes: CpeRow[] = [];
  const configurations = Array.isArray(cve.configurations) ? (cve.configurations as Json[]) : [];
  configurations.forEach((configuration, ci) => {
    const nodes = Array.isArray(configuration.nodes) ? (configuration.nodes as Json[]) : [];
    nodes.forEach((node, ni) => {
      const matches = Array.isArray(node.cpeMatch) ? (node.cpeMatch as Json[]) : [];
      matches.forEach((match, mi) => {
        const criteria = str(match.criteria);
        const cpe = parseCpe(criteria);
        if (!cpe) return;
        cpes.push({
          cve_id: cveId,
          config_index: ci,
          node_index: ni,
          match_index: mi,
          config_operator: str(configuration.operator) || 'OR',
          node_operator: str(node.operator) || 'OR',
          negate: node.negate === true,
          vulnerable: match.vulnerable === true,
          criteria,
          part: cpe.part,
          vendor: cpe.vendor,
          product: cpe.product,
          version: cpe.version,
          cpe_update: cpe.update,
          target_sw: cpe.targetSw,
          version_start_including: optional(match.versionStartIncluding),
          version_start_excluding: optional(match.versionStartExcluding),
          version_end_including: optional(match.versionEndIncluding),
          version_end_excluding: optional(match.versionEndExcluding),
        });
      });
    });
  });
  return { cve: { ...fields, content_hash: digest([fields, cpes]) }, cpes };
}

// ---------------------------------------------------------------------------------------------- OSV

export interface OsvRow {
  id: string;
  modified: string | null;
  published: string | null;
  withdrawn: string | null;
  aliases: string[];
  related: string[];
  cve_ids: string[];
  summary: string | null;
  details: string | null;
  severity: Array<{ type: string; score: string }>;
  reference_urls: string[];
  content_hash: string;
}

export interface AffectedRow {
  advisory_id: string;
  idx: number;
  ecosystem: string;
  ecosystem_key: string;
  name: string;
  name_key: string;
  purl: string | null;
  ranges: StoredRange[];
  versions: string[];
  /** The distribution's rating for this package (Debian's `ecosystem_specific.urgency`), or null. */
  urgency: string | null;
}

const MAX_DETAILS = 20_000;
const EVENT_KEYS = ['introduced', 'fixed', 'last_affected', 'limit'] as const;

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

const MAX_URGENCY = 40;

/** Debian writes `ecosystem_specific.urgency` ("low", "unimportant", "not yet assigned", ...). */
function urgencyOf(specific: Json): string | null {
  const value = specific && typeof specific === 'object' ? specific.urgency : undefined;
  return typeof value === 'string' && value.trim() ? value.trim().toLowerCase().slice(0, MAX_URGENCY) : null;
}

/**
 * One OSV record into its row and its affected packages. Affected entries without a package (pure GIT
 * ranges of an upstream repository) are left out: they name commits, not package versions.
 */
export function osvRows(record: Json): { advisory: OsvRow; affected: AffectedRow[] } {
  const id = str(record?.id).trim();
  if (!id) throw new RecordError('OSV record without an id');
  const aliases = strings(record.aliases);
  const related = strings(record.related);
  const own = [id, ...aliases].filter((v) => CVE_ID.test(v));
  const cveIds = unique(own.length ? own : related.filter((v) => CVE_ID.test(v)));
  const details = typeof record.details === 'string' ? record.details.slice(0, MAX_DETAILS) : null;
  const severity = (Array.isArray(record.severity) ? (record.severity as Json[]) : [])
    .filter((s) => typeof s.type === 'string' && typeof s.score === 'string')
    .map((s) => ({ type: s.type as string, score: s.score as string }));
  const references = Array.isArray(record.references) ? (record.references as Json[]) : [];
  const fields = {
    id,
    modified: utc(record.modified),
    published: utc(record.published),
    withdrawn: utc(record.withdrawn),
    aliases,
    related,
    cve_ids: cveIds,
    summary: optional(record.summary),
    details,
    severity,
    reference_urls: unique(references.map((r) => str(r.url)).filter(Boolean)),
  };
  const affected: AffectedRow[] = [];
  const entries = Array.isArray(record.affected) ? (record.affected as Json[]) : [];
  entries.forEach((entry, idx) => {
    const ecosystem = str(entry?.package?.ecosystem).trim();
    const name = str(entry?.package?.name).trim();
    if (!ecosystem || !name) return;
    const ranges: StoredRange[] = (Array.isArray(entry.ranges) ? (entry.ranges as Json[]) : [])
      .filter((r) => r.type === 'ECOSYSTEM' || r.type === 'SEMVER')
      .map((r) => ({
        type: r.type as StoredRange['type'],
        events: (Array.isArray(r.events) ? (r.events as Json[]) : [])
          .map((e) => {
            const key = EVENT_KEYS.find((k) => typeof e[k] === 'string');
            return key ? { [key]: e[key] as string } : null;
          })
          .filter((e): e is StoredRange['events'][number] => e !== null),
      }))
      .filter((r) => r.events.length > 0);
    const versions = strings(entry.versions);
    if (ranges.length === 0 && versions.length === 0) return;
    const info = ecosystemInfo(ecosystem);
    affected.push({
      advisory_id: id,
      idx,
      ecosystem,
      ecosystem_key: info.key,
      name,
      name_key: packageKey(info.base, name),
      purl: optional(entry.package.purl),
      ranges,
      versions,
      urgency: urgencyOf(entry.ecosystem_specific),
    });
  });
  return { advisory: { ...fields, content_hash: digest([fields, affected]) }, affected };
}
