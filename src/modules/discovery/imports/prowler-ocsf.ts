import type { Readable } from 'node:stream';
import { JsonSyntaxError, jsonItems } from '../../../platform/json/json-items.js';
import { lookupTable } from '../../../platform/lookup-table.js';
import { MalformedImportError, type ImportItem, type ImportParser, type ImportProvider, type ImportedFinding, type ImportedSeverity, type RecordError } from './import-record.js';

/**
 * Prowler's `-M json-ocsf` output (v4: OCSF 1.2, v5: OCSF 1.4): a JSON array of OCSF Detection
 * Findings (class_uid 2004), one per check and resource. Both versions name the check in
 * `metadata.event_code` and the resource in `resources[0]`; v5 adds `message`.
 */

type Obj = Record<string, unknown>;

const isObject = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const at = (value: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, key) => (isObject(v) ? v[key] : undefined), value);

const STATUSES = lookupTable<ImportedFinding['status']>({ FAIL: 'fail', PASS: 'pass', MANUAL: 'unknown', MUTED: 'unknown' });

const SEVERITIES = lookupTable<ImportedSeverity>({
  critical: 'critical',
  fatal: 'critical',
  high: 'high',
  medium: 'medium',
  low: 'low',
  informational: 'info',
  info: 'info',
});

const PROVIDERS = lookupTable<ImportProvider>({
  aws: 'aws',
  azure: 'azure',
  gcp: 'gcp',
  kubernetes: 'kubernetes',
  m365: 'm365',
  microsoft365: 'm365',
  github: 'github',
});

/** `{"CIS-1.4": ["2.1.1"], ...}` as requirement pairs; anything else in there is ignored. */
function requirementsOf(compliance: unknown): ImportedFinding['requirements'] {
  if (!isObject(compliance)) return [];
  const out: ImportedFinding['requirements'] = [];
  for (const [framework, ids] of Object.entries(compliance)) {
    if (!Array.isArray(ids)) continue;
    for (const id of ids) if (typeof id === 'string' && id) out.push({ framework, requirement: id });
  }
  return out;
}

function remediationOf(record: Obj): string {
  const desc = text(at(record, 'remediation', 'desc'));
  const refs = at(record, 'remediation', 'references');
  const links = Array.isArray(refs) ? refs.filter((r): r is string => typeof r === 'string' && r.length > 0) : [];
  return [desc, ...links].filter(Boolean).join('\n');
}

/**
 * The finding's title must say what is wrong: Prowler's `status_detail` (v4) and `message` (v5) are
 * the per-resource verdict ("bucket x has no default encryption"); `finding_info.title` is the
 * check's neutral question, a last resort.
 */
function titleOf(record: Obj, status: ImportedFinding['status'], checkTitle: string): string {
  const verdict = text(record.status_detail) || text(record.message);
  if (verdict) return verdict;
  return status === 'fail' ? `Failed: ${checkTitle}` : checkTitle;
}

/** Fields worth keeping, none that change from one scan to the next (so a re-import changes nothing). */
function detailsOf(record: Obj, resource: Obj, statusCode: string): Obj {
  const details: Obj = { status_code: statusCode };
  const risk = text(record.risk_details);
  if (risk) details.risk = risk;
  const url = text(at(record, 'unmapped', 'related_url'));
  if (url) details.related_url = url;
  const categories = at(record, 'unmapped', 'categories');
  if ((Array.isArray(categories) && categories.length) || (typeof categories === 'string' && categories)) details.categories = categories;
  const service = text(at(resource, 'group', 'name'));
  if (service) details.service = service;
  return details;
}

/** One OCSF record as a finding, or the reason it cannot be one. */
export function prowlerFinding(record: unknown, index: number): ImportedFinding | RecordError {
  const error = (message: string): RecordError => ({ kind: 'error', record: index, message });
  if (!isObject(record)) return error(`expected an OCSF finding object, got ${Array.isArray(record) ? 'an array' : typeof record}`);
  if (record.class_uid !== undefined && record.class_uid !== 2004) return error(`not a Detection Finding (class_uid ${JSON.stringify(record.class_uid)}, expected 2004)`);
  const checkId = text(at(record, 'metadata', 'event_code'));
  if (!checkId) return error('no check id (metadata.event_code)');
  const statusCode = text(record.status_code).toUpperCase();
  const status = STATUSES[statusCode];
  if (!status) return error(`unknown status_code ${JSON.stringify(record.status_code ?? null)} (expected FAIL, PASS, MANUAL or MUTED)`);
  const resources = record.resources;
  const resource = Array.isArray(resources) && isObject(resources[0]) ? resources[0] : null;
  const uid = text(resource?.uid);
  if (!resource || !uid) return error('no resource (resources[0].uid)');
  const providerName = text(at(record, 'cloud', 'provider')).toLowerCase() || text(resource.cloud_partition).toLowerCase();
  const provider = PROVIDERS[providerName];
  if (!provider) return error(`unknown cloud.provider ${JSON.stringify(providerName)}`);
  const checkTitle = text(at(record, 'finding_info', 'title')) || checkId;
  return {
    kind: 'finding',
    source: 'prowler',
    check_id: checkId,
    source_finding_id: text(at(record, 'finding_info', 'uid')),
    status,
    severity: SEVERITIES[text(record.severity).toLowerCase()] ?? 'info',
    title: titleOf(record, status, checkTitle),
    description: text(at(record, 'finding_info', 'desc')) || checkTitle,
    remediation: remediationOf(record),
    resource: {
      provider,
      uid,
      type: text(resource.type) || 'Other',
      name: text(resource.name) || uid,
      account_id: text(at(record, 'cloud', 'account', 'uid')),
      region: text(resource.region) || text(at(record, 'cloud', 'region')),
    },
    requirements: requirementsOf(at(record, 'unmapped', 'compliance')),
    details: detailsOf(record, resource, statusCode),
  };
}

/** The stream's JSON errors as the contract's MalformedImportError, with the byte offset. */
function malformed(error: unknown): never {
  if (error instanceof JsonSyntaxError) throw new MalformedImportError(`not a Prowler OCSF file: ${error.message}`, error.offset);
  throw error;
}

async function* parseProwlerOcsf(input: Readable): AsyncIterable<ImportItem> {
  const items = jsonItems(input, null);
  let index = 0;
  try {
    for await (const record of items) {
      if (index === 0 && items.topLevel !== 'array') break;
      yield prowlerFinding(record, index++);
    }
  } catch (error) {
    malformed(error);
  }
  // A top-level object is a single record or a wrapper, neither of which Prowler writes.
  if (items.topLevel !== 'array') throw new MalformedImportError('not a Prowler OCSF file: expected a JSON array of OCSF findings at byte 0', 0);
}

export const prowlerOcsfParser: ImportParser = {
  format: 'prowler-ocsf',
  detect: (head) => /^\s*\[/.test(head) && /"class_uid"\s*:\s*2004\b/.test(head),
  parse: parseProwlerOcsf,
};
