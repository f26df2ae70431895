import type { Readable } from 'node:stream';
import { lookupTable } from '../../../platform/lookup-table.js';
import { jsonItems, type ItemExtractor } from '../../../platform/json/json-items.js';
import { MalformedImportError, type ImportItem, type ImportParser, type ImportedFinding, type ImportedResource, type ImportedSeverity, type RecordError } from './import-record.js';
import { at, isObject, kindOf, list, rethrowMalformed, text, type Obj } from './json-fields.js';

/**
 * AWS Security Finding Format (ASFF, SchemaVersion 2018-10-08), in the two shapes users have:
 * - Prowler's `-M json-asff` output: a bare JSON array of findings whose ProductArn is
 *   `product/prowler/prowler` (format `prowler-asff`);
 * - Security Hub findings (format `securityhub-asff`): `aws securityhub get-findings` prints
 *   `{"Findings": [...], "NextToken": ...}`, some exports write `{"findings": [...]}` or a bare array,
 *   and a recorded API call wraps the response as `{"status_code": 200, "data": {"Findings": [...]}}`.
 * Both hold the same records, so one mapping serves both: the source is read per record from its
 * product (a Security Hub export may carry Prowler's, GuardDuty's and Inspector's findings at once).
 */

/** Where the findings are in a top-level object; a bare array needs no path. */
const FINDINGS_AT = [['Findings'], ['findings'], ['data', 'Findings'], ['data', 'findings']];

const ASFF_SCHEMA = /"SchemaVersion"\s*:\s*"2018-10-08"/;
/** Prowler marks its findings three ways; any one in the head is enough. */
const PROWLER_MARKS = [/"ProductArn"\s*:\s*"arn:[^"]*:product\/prowler\/prowler"/, /"ProviderName"\s*:\s*"Prowler"/, /"GeneratorId"\s*:\s*"prowler-/];

const isAsff = (head: string) => ASFF_SCHEMA.test(head);
const isProwler = (head: string) => PROWLER_MARKS.some((mark) => mark.test(head));

/**
 * Compliance.Status of a check result. WARNING (the check could not complete), NOT_AVAILABLE (an
 * outage, or AWS Config said NOT_APPLICABLE) and Prowler v3's INFOED (a manual or informational
 * check) decide nothing: unknown.
 */
const COMPLIANCE_STATUS = lookupTable<ImportedFinding['status']>({
  FAILED: 'fail',
  PASSED: 'pass',
  WARNING: 'unknown',
  NOT_AVAILABLE: 'unknown',
  INFOED: 'unknown',
});

const SEVERITY = lookupTable<ImportedSeverity>({
  CRITICAL: 'critical',
  HIGH: 'high',
  MEDIUM: 'medium',
  LOW: 'low',
  INFORMATIONAL: 'info',
});

/**
 * The finding's status. Precedence, and why:
 * 1. RecordState ARCHIVED → pass: the product itself stopped reporting it (Inspector archives a fixed
 *    vulnerability, Security Hub a control finding whose resource is gone or whose control was
 *    disabled, GuardDuty an archived finding): nothing is open any more, so it resolves ours.
 * 2. Workflow.Status SUPPRESSED → unknown: someone chose not to act. That is not evidence of a fix,
 *    so it neither opens nor resolves a finding; the state is kept in details so the team can
 *    record a risk acceptance in ControlGraph instead.
 * 3. A check result (Compliance.Status present) → the evaluation decides, even when a person set
 *    Workflow.Status RESOLVED: Security Hub reopens a resolved finding when its check fails again,
 *    so RESOLVED beside FAILED is a claim the latest evaluation contradicts.
 * 4. Workflow.Status RESOLVED → pass: for findings without a check result (GuardDuty, Inspector)
 *    it is the only "closed" signal there is.
 * 5. Otherwise the record is an active finding (a threat, a vulnerability): fail.
 */
function statusOf(record: Obj): ImportedFinding['status'] | null {
  const workflow = text(at(record, 'Workflow', 'Status')) || text(record.WorkflowState);
  if (text(record.RecordState) === 'ARCHIVED') return 'pass';
  if (workflow === 'SUPPRESSED') return 'unknown';
  const compliance = text(at(record, 'Compliance', 'Status'));
  if (compliance) return COMPLIANCE_STATUS[compliance] ?? null;
  if (workflow === 'RESOLVED') return 'pass';
  return 'fail';
}

/**
 * Severity.Label, else Severity.Normalized by the ASFF ranges (0 informational, 1-39 low, 40-69
 * medium, 70-89 high, 90-100 critical). A finding without either is medium: calling it info would
 * hide a finding the source did not grade.
 */
function severityOf(record: Obj): ImportedSeverity {
  const label = text(at(record, 'Severity', 'Label')) || text(at(record, 'FindingProviderFields', 'Severity', 'Label'));
  const byLabel = SEVERITY[label.toUpperCase()];
  if (byLabel) return byLabel;
  const normalized = at(record, 'Severity', 'Normalized');
  if (typeof normalized !== 'number') return 'medium';
  if (normalized >= 90) return 'critical';
  if (normalized >= 70) return 'high';
  if (normalized >= 40) return 'medium';
  return normalized >= 1 ? 'low' : 'info';
}

/**
 * The producing product in lower case: `product/aws/guardduty` → guardduty, `product/prowler/prowler`
 * → prowler, `product/aws/securityhub` (Security Hub's own controls) → securityhub. ProductArn is
 * required by ASFF; the product name is the fallback for a record that lacks it (or is a custom
 * integration's `default`).
 */
function sourceOf(record: Obj): string {
  const product = /:product\/[^/]+\/([^/]+)$/.exec(text(record.ProductArn))?.[1];
  // A custom integration imports under `product/<account>/default`, which names no product.
  if (product && product !== 'default') return product.toLowerCase();
  if (text(at(record, 'ProductFields', 'ProviderName')) === 'Prowler') return 'prowler';
  const name = text(at(record, 'ProductFields', 'aws/securityhub/ProductName')) || text(record.ProductName);
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '') || 'securityhub';
}

const lastSegment = (value: string) => value.slice(value.lastIndexOf('/') + 1);

/**
 * The source's check id: Prowler's check (GeneratorId `prowler-<check>`), a Security Hub control
 * (`S3.1`: the consolidated SecurityControlId, else the standard's ControlId or CIS RuleId),
 * GuardDuty's finding type (`Recon:EC2-Portscan`, the last part of Types[0]: its GeneratorId is
 * the detector), a vulnerability id (Inspector), else the GeneratorId.
 */
function checkIdOf(record: Obj, source: string): string {
  const generator = text(record.GeneratorId);
  if (source === 'prowler' && generator) return generator.replace(/^prowler-/, '');
  const control = text(at(record, 'Compliance', 'SecurityControlId')) || text(at(record, 'ProductFields', 'ControlId')) || text(at(record, 'ProductFields', 'RuleId'));
  if (control) return control;
  const firstType = text(list(record.Types)[0]);
  if (source === 'guardduty' && firstType) return lastSegment(firstType);
  const vulnerability = text(at(list(record.Vulnerabilities)[0], 'Id'));
  if (vulnerability) return vulnerability;
  if (generator && !generator.startsWith('arn:')) return generator;
  return firstType ? lastSegment(firstType) : text(record.Id);
}

/** `arn:partition:service:region:account:resource` split, or null for an id that is not an ARN. */
function arnParts(id: string): { region: string; account: string; resource: string } | null {
  const parts = id.split(':');
  if (parts[0] !== 'arn' || parts.length < 6) return null;
  return { region: parts[3]!, account: parts[4]!, resource: parts.slice(5).join(':') };
}

/** A readable name: `instance/i-0abc` → `i-0abc`, `arn:aws:s3:::bucket` → `bucket`, `AWS::::Account:123` → `123`. */
function nameFromId(id: string): string {
  const arn = arnParts(id);
  if (!arn) return id.slice(id.lastIndexOf(':') + 1) || id;
  const slash = arn.resource.indexOf('/');
  return slash >= 0 ? arn.resource.slice(slash + 1) : arn.resource;
}

function tagsOf(value: unknown): Record<string, string> | undefined {
  if (!isObject(value)) return undefined;
  const tags = Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  return tags.length ? Object.fromEntries(tags) : undefined;
}

/** Resources[0] as the finding's resource; ASFF resources are AWS's (Partition aws, aws-cn, aws-us-gov). */
function resourceOf(record: Obj, first: Obj, uid: string): ImportedResource {
  const arn = arnParts(uid);
  const tags = tagsOf(first.Tags);
  return {
    provider: 'aws',
    uid,
    type: text(first.Type) || 'Other',
    name: text(at(record, 'ProductFields', 'ProwlerResourceName')) || nameFromId(uid),
    account_id: arn?.account || text(record.AwsAccountId),
    region: text(first.Region) || text(record.Region) || arn?.region || '',
    ...(tags ? { tags } : {}),
  };
}

/** Prowler's length limit on a RelatedRequirements entry (see requirementsOf). */
const PROWLER_CUT = 63;

const FSBP = 'aws-foundational-security-best-practices';

/**
 * A Security Hub finding of the AWS Foundational Security Best Practices standard is itself the result
 * of one of its controls: GeneratorId `aws-foundational-security-best-practices/v/1.0.0/IAM.5`, or a
 * consolidated control finding (`SecurityControlId` IAM.5 with the standard among its
 * `AssociatedStandards`). Named as Prowler names the framework, so it maps onto the aws-fsbp catalog.
 */
function standardControlOf(record: Obj): ImportedFinding['requirements'] {
  const generated = new RegExp(`^${FSBP}/v/[^/]+/(.+)$`).exec(text(record.GeneratorId));
  const consolidated = list(at(record, 'Compliance', 'AssociatedStandards')).some((s) => text(at(s, 'StandardsId')).startsWith(`standards/${FSBP}/`))
    ? text(at(record, 'Compliance', 'SecurityControlId'))
    : '';
  const control = generated?.[1] ?? consolidated;
  return control ? [{ framework: 'AWS-Foundational-Security-Best-Practices', requirement: control }] : [];
}

/**
 * Compliance.RelatedRequirements as {framework, requirement}. Security Hub writes
 * `Framework vX/requirement` ("PCI DSS v3.2.1/8.3.1", "CIS AWS Foundations Benchmark v1.2.0/1.10") or
 * `Framework requirement` ("NIST.800-53.r5 AC-2(1)"); Prowler writes `Framework req req ...`
 * ("CIS-1.5 5.2 5.3": one framework, several requirements). Prowler cuts each entry to 63 characters:
 * an entry that long may end in half a requirement ("HIPAA ... 164_312_"), and
 * a wrong requirement id would map the finding to the wrong control, so that last word is dropped.
 */
export function requirementsOf(related: unknown): ImportedFinding['requirements'] {
  const out: ImportedFinding['requirements'] = [];
  for (const entry of list(related)) {
    const raw = text(entry);
    const value = raw.trim();
    const slash = value.lastIndexOf('/');
    const afterSlash = value.slice(slash + 1);
    if (slash > 0 && afterSlash && !/\s/.test(afterSlash)) {
      out.push({ framework: value.slice(0, slash).trim(), requirement: afterSlash });
      continue;
    }
    const [framework, ...requirements] = value.split(/\s+/);
    if (raw.length >= PROWLER_CUT && !/\s$/.test(raw)) requirements.pop();
    for (const requirement of requirements) if (framework && requirement) out.push({ framework, requirement });
  }
  return out;
}

/**
 * The title must state the failure. Prowler's Description is its per-resource verdict ("IAM Access
 * Analyzer in account 1234 is not enabled") and its Title the check's neutral question, so the
 * verdict is the title. A Security Hub control's Title is the control's name ("S3.1 S3 Block Public
 * Access setting should be enabled"): a failed one is prefixed with the resource that failed it.
 * GuardDuty's and Inspector's Titles already state what was found.
 */
function titleOf(record: Obj, source: string, status: ImportedFinding['status'], resource: ImportedResource, checkId: string): string {
  const title = text(record.Title) || checkId;
  if (source === 'prowler') return text(record.Description) || (status === 'fail' ? `${resource.name} failed: ${title}` : title);
  const isCheck = text(at(record, 'Compliance', 'Status')) !== '';
  return isCheck && status === 'fail' ? `${resource.type} ${resource.name} failed: ${title}` : title;
}

function remediationOf(record: Obj): string {
  const recommendation = at(record, 'Remediation', 'Recommendation');
  return [text(at(recommendation, 'Text')), text(at(recommendation, 'Url'))].filter(Boolean).join('\n');
}

const CVE = /^CVE-\d{4}-\d+$/i;

/** Fields worth keeping that have no column; none that change from one scan to the next (timestamps), so importing a file twice changes nothing. */
function detailsOf(record: Obj, vulnerabilityIds: string[]): Obj {
  const details: Obj = {};
  const keep = (key: string, value: unknown) => {
    if (value !== undefined && value !== '' && !(Array.isArray(value) && value.length === 0)) details[key] = value;
  };
  keep('product_arn', text(record.ProductArn));
  keep('generator_id', text(record.GeneratorId));
  keep(
    'types',
    list(record.Types).filter((t) => typeof t === 'string'),
  );
  keep('record_state', text(record.RecordState));
  keep('workflow_status', text(at(record, 'Workflow', 'Status')) || text(record.WorkflowState));
  keep('compliance_status', text(at(record, 'Compliance', 'Status')));
  keep('check_title', text(record.Title));
  keep('source_url', text(record.SourceUrl));
  keep(
    'vulnerability_ids',
    vulnerabilityIds.filter((id) => !CVE.test(id)),
  );
  return details;
}

/** One ASFF record as a finding, or the reason it cannot be one (the import goes on). */
export function asffFinding(record: unknown, index: number): ImportedFinding | RecordError {
  const error = (message: string): RecordError => ({ kind: 'error', record: index, message });
  if (!isObject(record)) return error(`expected an ASFF finding object, got ${kindOf(record)}`);
  const id = text(record.Id);
  if (!id) return error('no Id');
  const first = list(record.Resources)[0];
  const uid = text(at(first, 'Id'));
  if (!isObject(first) || !uid) return error(`finding ${id}: no resource (Resources[0].Id)`);
  const status = statusOf(record);
  if (!status) return error(`finding ${id}: unknown Compliance.Status ${JSON.stringify(at(record, 'Compliance', 'Status'))}`);
  const source = sourceOf(record);
  const checkId = checkIdOf(record, source);
  const resource = resourceOf(record, first, uid);
  const vulnerabilityIds = list(record.Vulnerabilities)
    .map((v) => text(at(v, 'Id')))
    .filter(Boolean);
  const cveIds = vulnerabilityIds.filter((v) => CVE.test(v));
  return {
    kind: 'finding',
    source,
    check_id: checkId,
    source_finding_id: id,
    status,
    severity: severityOf(record),
    title: titleOf(record, source, status, resource, checkId),
    description: text(record.Description),
    remediation: remediationOf(record),
    resource,
    // The standard's control last: a finding's first mapped requirement stays its framework and control.
    requirements: [...requirementsOf(at(record, 'Compliance', 'RelatedRequirements')), ...standardControlOf(record)],
    ...(cveIds.length ? { cve_ids: cveIds } : {}),
    details: detailsOf(record, vulnerabilityIds),
  };
}

/** The object held a findings array (maybe empty) at one of the paths: it was kept in the header, emptied. */
const hasFindingsArray = (header: Obj) => FINDINGS_AT.some((path) => Array.isArray(at(header, ...path)));

/**
 * A top-level object must hold a findings array. `{}` (or any other JSON object) is refused as
 * malformed rather than imported as zero findings: an upload of the wrong file must say so, not
 * resolve nothing silently. `{"Findings": []}` (a GetFindings page with no results) is valid and
 * empty. A lone finding object (what BatchImportFindings takes one of) is read as one record.
 */
function* afterStream(items: ItemExtractor, index: number): Iterable<ImportItem> {
  if (items.topLevel !== 'object' || hasFindingsArray(items.header)) return;
  if (text(items.header.SchemaVersion) && text(items.header.Id)) {
    yield asffFinding(items.header, index);
    return;
  }
  throw new MalformedImportError('not an ASFF file: no Findings array (expected a JSON array of findings, {"Findings": [...]} or {"data": {"Findings": [...]}}) at byte 0', 0);
}

async function* parseAsff(input: Readable): AsyncIterable<ImportItem> {
  const items = jsonItems(input, FINDINGS_AT);
  let index = 0;
  try {
    for await (const record of items) yield asffFinding(record, index++);
  } catch (error) {
    rethrowMalformed(error, 'ASFF');
  }
  yield* afterStream(items, index);
}

export const prowlerAsffParser: ImportParser = {
  format: 'prowler-asff',
  detect: (head) => isAsff(head) && isProwler(head),
  parse: parseAsff,
};

export const securityHubAsffParser: ImportParser = {
  format: 'securityhub-asff',
  detect: (head) => isAsff(head) && !isProwler(head),
  parse: parseAsff,
};
