import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { lookupTable } from '../../../platform/lookup-table.js';
import { jsonItems } from '../../../platform/json/json-items.js';
import { MalformedImportError, type ImportItem, type ImportParser, type ImportedFinding, type ImportedLocation, type ImportedSeverity, type RecordError } from './import-record.js';
import { at, isObject, kindOf, list, rethrowMalformed, text, type Obj } from './json-fields.js';

/**
 * SARIF 2.1.0 from IaC and code scanners (Trivy config, checkov, KICS, terrascan, Semgrep, ...):
 * `{"version": "2.1.0", "runs": [{"tool": {"driver": {...rules}}, "results": [...]}]}`.
 *
 * Memory: the runs are streamed one at a time, but each run is held whole while its results are
 * read, because a result needs its rule (severity, description) and tools do not agree on the
 * order: Semgrep writes `results` before `tool`, so the rules may only be known at the end of the
 * run. A run is therefore bounded by json-items' MAX_RECORD_BYTES (64 MiB of JSON); a larger run is
 * refused as malformed, naming its offset. Files have one run per tool invocation, so the bound is
 * per scan, not per file.
 */

/** The run as this parser needs it: who produced it and its rules. */
interface RunContext {
  source: string;
  version: string;
  /** As the driver lists them (unfiltered: results point to a rule by its position). */
  rules: unknown[];
  rulesById: Map<string, Obj>;
  /** run.artifacts and run.logicalLocations: a result may point into them by index instead of repeating them. */
  artifacts: unknown[];
  logicalLocations: unknown[];
}

/** SARIF result levels when no numeric security-severity says more. */
const LEVEL_SEVERITY = lookupTable<ImportedSeverity>({ error: 'high', warning: 'medium', note: 'low', none: 'info' });

/** Severity words tools put in rule properties (terrascan `severity: MEDIUM`, Semgrep `security-severity: HIGH`). */
const WORD_SEVERITY = lookupTable<ImportedSeverity>({
  critical: 'critical',
  high: 'high',
  error: 'high',
  medium: 'medium',
  moderate: 'medium',
  warning: 'medium',
  low: 'low',
  note: 'low',
  info: 'info',
  informational: 'info',
  none: 'info',
});

/** result.kind: only `fail` (or none, the default) is a failure; `pass` resolves; the rest decide nothing. */
const KIND_STATUS = lookupTable<ImportedFinding['status']>({
  fail: 'fail',
  pass: 'pass',
  open: 'unknown',
  review: 'unknown',
  informational: 'unknown',
  notApplicable: 'unknown',
});

const SCHEMA = /"\$schema"\s*:\s*"[^"]*sarif[^"]*"/i;
const VERSION = /"version"\s*:\s*"2\.1\.0"/;
const RUNS = /"runs"\s*:\s*\[/;
const SARIF_RESULT = /"(?:ruleId|driver)"\s*:/;

/** `$schema` names SARIF in every tool's output we know; otherwise a `runs` array beside the version or a result's ruleId. */
function detectSarif(head: string): boolean {
  if (!RUNS.test(head)) return false;
  return SCHEMA.test(head) || VERSION.test(head) || SARIF_RESULT.test(head);
}

/** Tools whose driver name carries an edition ("Semgrep OSS", "Semgrep Pro"): the source is the tool. */
const EDITIONS = /\s+(?:oss|pro|community|enterprise|cli)$/i;

/** The source: tool.driver.name in lower case, without an edition, spaces as dashes (`trivy`, `semgrep`, `kics`). */
export function sourceName(driverName: string): string {
  return driverName.trim().replace(EDITIONS, '').toLowerCase().replace(/\s+/g, '-');
}

function runContext(run: Obj): RunContext | string {
  const driver = at(run, 'tool', 'driver');
  const name = sourceName(text(at(driver, 'name')));
  if (!name) return 'a run without tool.driver.name';
  const rules = list(at(driver, 'rules'));
  const rulesById = new Map<string, Obj>();
  for (const rule of rules.filter(isObject)) if (text(rule.id) && !rulesById.has(text(rule.id))) rulesById.set(text(rule.id), rule);
  const version = text(at(driver, 'semanticVersion')) || text(at(driver, 'version'));
  return { source: name, version, rules, rulesById, artifacts: list(run.artifacts), logicalLocations: list(run.logicalLocations) };
}

/** The result's rule: by index (result.rule.index or ruleIndex), else by id; a hierarchical id `A/B` falls back to `A`. */
function ruleOf(result: Obj, run: RunContext, ruleId: string): Obj | undefined {
  const index = at(result, 'rule', 'index') ?? result.ruleIndex;
  const byIndex = typeof index === 'number' ? run.rules[index] : undefined;
  if (isObject(byIndex)) return byIndex;
  return run.rulesById.get(ruleId) ?? run.rulesById.get(ruleId.split('/')[0]!);
}

function fromScore(score: number): ImportedSeverity {
  if (score >= 9) return 'critical';
  if (score >= 7) return 'high';
  if (score >= 4) return 'medium';
  return score > 0 ? 'low' : 'info';
}

/**
 * security-severity (GitHub's convention: a CVSS-like number, in the result's or the rule's
 * properties) decides; a word there or in `severity` next; the SARIF level last (its default is
 * warning).
 */
function severityOf(result: Obj, rule: Obj | undefined): ImportedSeverity {
  for (const props of [at(result, 'properties'), at(rule, 'properties')]) {
    const stated = at(props, 'security-severity');
    const score = typeof stated === 'number' ? stated : typeof stated === 'string' && stated.trim() !== '' ? Number(stated) : NaN;
    if (Number.isFinite(score)) return fromScore(score);
    const word = WORD_SEVERITY[text(stated).toLowerCase()] ?? WORD_SEVERITY[text(at(props, 'severity')).toLowerCase()];
    if (word) return word;
  }
  const level = text(result.level) || text(at(rule, 'defaultConfiguration', 'level')) || 'warning';
  return LEVEL_SEVERITY[level] ?? 'medium';
}

/** A suppression in force: `accepted`, or no status (SARIF's default). `underReview` and `rejected` suppress nothing yet. */
function suppressionOf(result: Obj): Obj | null {
  const inForce = list(result.suppressions).find((s) => isObject(s) && ['', 'accepted'].includes(text(s.status)));
  return isObject(inForce) ? inForce : null;
}

/** A suppressed result (accepted by someone) is unknown: not fixed, so not a pass, and not for us to open again. */
function statusOf(result: Obj, suppression: Obj | null): ImportedFinding['status'] | null {
  if (suppression) return 'unknown';
  const kind = text(result.kind) || 'fail';
  return KIND_STATUS[kind] ?? null;
}

/** `file:///a/b.tf` → `/a/b.tf`, `dir\\main.tf` → `dir/main.tf`, `./x` → `x`, percent-escapes decoded. */
export function normalizeUri(uri: string): string {
  let path = uri
    .replace(/^file:\/\//i, '')
    .replace(/\\/g, '/')
    .replace(/^\.\//, '');
  try {
    path = decodeURI(path);
  } catch {
    // A stray % is part of the name, not an escape.
  }
  return path;
}

/** The artifact's uri, given inline or by index into run.artifacts. */
function uriOf(artifactLocation: unknown, run: RunContext): string {
  const inline = text(at(artifactLocation, 'uri'));
  if (inline) return inline;
  const index = at(artifactLocation, 'index');
  return typeof index === 'number' ? text(at(run.artifacts[index], 'location', 'uri')) : '';
}

function locationOf(first: unknown, run: RunContext): ImportedLocation | null {
  const physical = at(first, 'physicalLocation');
  const uri = normalizeUri(uriOf(at(physical, 'artifactLocation'), run));
  if (!uri) return null;
  const start = at(physical, 'region', 'startLine');
  const end = at(physical, 'region', 'endLine');
  return {
    uri,
    ...(typeof start === 'number' ? { start_line: start } : {}),
    ...(typeof end === 'number' ? { end_line: end } : {}),
  };
}

const TERRAFORM_FILE = /\.tf(?:\.json)?$/i;
/** A Terraform resource type (`aws_s3_bucket`): provider prefix, underscore, lower case. */
const TF_TYPE = /^[a-z][a-z0-9]*_[a-z0-9_]+$/;
const TF_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** `aws_s3_bucket.logs`, `module.net.aws_vpc.main`, `data.aws_iam_policy_document.x`, with an optional `[0]` or `["a"]`. */
const TF_ADDRESS = /^(?:module\.[A-Za-z_][\w-]*(?:\[[^\]]+\])?\.)*(?:data\.)?[a-z][a-z0-9]*_[a-z0-9_]+\.[A-Za-z_][\w-]*(?:\[[^\]]+\])?$/;
/** The same inside a message: `resource "aws_s3_bucket" "logs"` or a bare address. */
const TF_BLOCK_IN_TEXT = /resource\s+"([a-z][a-z0-9]*_[a-z0-9_]+)"\s+"([A-Za-z_][\w-]*)"/;
const TF_ADDRESS_IN_TEXT = /(?:^|[\s'"`(])((?:module\.[A-Za-z_][\w-]*\.)*(?:data\.)?[a-z][a-z0-9]*_[a-z0-9_]+\.[A-Za-z_][\w-]*)(?=$|[\s'"`),:;])/;

/** The first logical location, inline or by index into run.logicalLocations (then the run's entry, with the inline fields over it). */
function logicalOf(first: unknown, run: RunContext): Obj | undefined {
  const inline = list(at(first, 'logicalLocations')).find(isObject);
  const index = inline?.index;
  const shared = typeof index === 'number' ? run.logicalLocations[index] : undefined;
  return isObject(shared) ? { ...shared, ...inline } : inline;
}

/**
 * The Terraform resource address, so the pipeline can link the finding to the Terraform node:
 * from the logical location (terrascan: kind `aws_ami`, name `awsAmiEncrypted`; others give a
 * fullyQualifiedName) or from the message. Only for Terraform files: elsewhere `a_b.c` is code.
 */
function terraformAddressOf(uri: string, logical: Obj | undefined, message: string): string | null {
  if (!TERRAFORM_FILE.test(uri)) return null;
  const qualified = text(logical?.fullyQualifiedName);
  if (TF_ADDRESS.test(qualified)) return qualified;
  const kind = text(logical?.kind);
  const name = text(logical?.name);
  if (TF_TYPE.test(kind) && TF_NAME.test(name)) return `${kind}.${name}`;
  if (TF_ADDRESS.test(name)) return name;
  const block = TF_BLOCK_IN_TEXT.exec(message);
  if (block) return `${block[1]}.${block[2]}`;
  return TF_ADDRESS_IN_TEXT.exec(message)?.[1] ?? null;
}

const HEADLINE_MAX = 300;

/**
 * What the message says is wrong, in one line: Trivy's `Message: ...` line; else the first sentence
 * of the first paragraph (Semgrep wraps a long explanation over lines, so the first line stops
 * mid-sentence).
 */
function headline(message: string): string {
  const trivy = /^Message:\s*(.+)$/m.exec(message)?.[1];
  const paragraph = (trivy ?? message.trim().split(/\n\s*\n/)[0] ?? '').replace(/\s+/g, ' ').trim();
  const sentence = /^.+?[.!?](?=\s|$)/.exec(paragraph)?.[0] ?? paragraph;
  return sentence.length > HEADLINE_MAX ? `${sentence.slice(0, HEADLINE_MAX - 3)}...` : sentence;
}

/** Where, for the title: `aws_ami.x (main.tf:5)`, or `main.tf:5`. */
function placeOf(location: ImportedLocation, address: string | null): string {
  const file = location.start_line ? `${location.uri}:${location.start_line}` : location.uri;
  return address ? `${address} (${file})` : file;
}

/** Fingerprints (stable across runs) first; a partial fingerprint (often a line hash shared by every rule on the line) is qualified by the rule. */
function findingIdOf(result: Obj, ruleId: string, source: string, location: ImportedLocation, message: string): string {
  const full = Object.values(isObject(result.fingerprints) ? result.fingerprints : {}).find((v) => typeof v === 'string' && v);
  if (typeof full === 'string') return full;
  const partial = Object.values(isObject(result.partialFingerprints) ? result.partialFingerprints : {}).find((v) => typeof v === 'string' && v);
  if (typeof partial === 'string') return `${ruleId}/${partial}`;
  const key = [source, ruleId, location.uri, String(location.start_line ?? ''), message].join('\u0000');
  return createHash('sha256').update(key).digest('hex');
}

/** Rule tags: CWE ids kept in details; OWASP Top 10 categories are a framework's requirements. */
function tagsOf(rule: Obj | undefined): string[] {
  return list(at(rule, 'properties', 'tags')).filter((t): t is string => typeof t === 'string');
}

/** CWE ids from the rule's tags (`CWE-346`, `CWE-89: Improper ...`) and its relationships to a CWE taxonomy (KICS). */
function cweOf(rule: Obj | undefined, tags: string[]): string[] {
  const ids = new Set<string>();
  for (const tag of tags) {
    const match = /^CWE-(\d+)\b/i.exec(tag.trim());
    if (match) ids.add(`CWE-${match[1]}`);
  }
  for (const relationship of list(at(rule, 'relationships'))) {
    const target = at(relationship, 'target');
    const id = text(at(target, 'id'));
    if (text(at(target, 'toolComponent', 'name')).toUpperCase() === 'CWE' && /^\d+$/.test(id)) ids.add(`CWE-${id}`);
  }
  return [...ids];
}

/** `OWASP-A05:2021-Security Misconfiguration` → {OWASP Top 10 2021, A05}. */
function requirementsOf(tags: string[]): ImportedFinding['requirements'] {
  const out: ImportedFinding['requirements'] = [];
  for (const tag of tags) {
    const match = /^OWASP-(A\d{1,2}):(\d{4})\b/i.exec(tag.trim());
    if (match) out.push({ framework: `OWASP Top 10 ${match[2]}`, requirement: match[1]!.toUpperCase() });
  }
  return out;
}

/** The rule's help and link; help that only repeats the description (Semgrep) is left out. */
function remediationOf(rule: Obj | undefined, description: string): string {
  const help = text(at(rule, 'help', 'text')).trim();
  return [help === description.trim() ? '' : help, text(at(rule, 'helpUri'))].filter(Boolean).join('\n');
}

interface DetailParts {
  run: RunContext;
  rule: Obj | undefined;
  result: Obj;
  address: string | null;
  logical: Obj | undefined;
  cwe: string[];
  suppression: Obj | null;
  message: string;
  /** What the title and description already say. */
  said: string[];
}

function detailsOf(parts: DetailParts): Obj {
  const { run, rule, result, address, logical, cwe, suppression, message, said } = parts;
  const details: Obj = {};
  const keep = (key: string, value: unknown) => {
    if (value !== undefined && value !== null && value !== '' && !(Array.isArray(value) && value.length === 0)) details[key] = value;
  };
  keep('tool_version', run.version);
  keep('rule_name', text(rule?.name));
  keep('level', text(result.level) || text(at(rule, 'defaultConfiguration', 'level')));
  keep('kind', text(result.kind));
  keep('terraform_address', address);
  keep('logical_location', text(logical?.fullyQualifiedName) || text(logical?.name));
  keep('uri_base_id', text(at(list(result.locations)[0], 'physicalLocation', 'artifactLocation', 'uriBaseId')));
  keep('cwe', cwe);
  keep('tags', tagsOf(rule));
  if (suppression) details.suppression = { kind: text(suppression.kind), status: text(suppression.status) || 'accepted', justification: text(suppression.justification) };
  // The title holds one sentence of the message: the whole text is kept when it says more.
  if (!said.includes(message.trim())) keep('message', message);
  return details;
}

/** One SARIF result as a finding, or the reason it cannot be one. */
function sarifFinding(result: unknown, run: RunContext, index: number): ImportedFinding | RecordError {
  const error = (message: string): RecordError => ({ kind: 'error', record: index, message });
  if (!isObject(result)) return error(`expected a SARIF result object, got ${kindOf(result)}`);
  const ruleId = text(result.ruleId) || text(at(result, 'rule', 'id'));
  if (!ruleId) return error('a result without ruleId');
  const first = list(result.locations)[0];
  const location = locationOf(first, run);
  if (!location) return error(`result of ${ruleId}: no location (locations[0].physicalLocation.artifactLocation.uri)`);
  const suppression = suppressionOf(result);
  const status = statusOf(result, suppression);
  if (!status) return error(`result of ${ruleId}: unknown kind ${JSON.stringify(result.kind)}`);
  const rule = ruleOf(result, run, ruleId);
  const message = text(at(result, 'message', 'text'));
  const logical = logicalOf(first, run);
  const address = terraformAddressOf(location.uri, logical, message);
  const logicalName = address ?? (text(logical?.fullyQualifiedName) || text(logical?.name));
  const what = headline(message) || text(at(rule, 'shortDescription', 'text')) || text(rule?.name) || ruleId;
  const title = `${placeOf(location, address)}: ${what}`;
  const tags = tagsOf(rule);
  const cwe = cweOf(rule, tags);
  const description = text(at(rule, 'fullDescription', 'text')).trim() || text(at(rule, 'shortDescription', 'text')) || message;
  return {
    kind: 'finding',
    source: run.source,
    check_id: ruleId,
    source_finding_id: findingIdOf(result, ruleId, run.source, location, message),
    status,
    severity: severityOf(result, rule),
    title,
    description,
    remediation: remediationOf(rule, description),
    resource: {
      provider: 'iac',
      uid: logicalName ? `${location.uri}#${logicalName}` : location.uri,
      type: 'iac_file',
      name: location.uri,
      account_id: '',
      region: '',
    },
    requirements: requirementsOf(tags),
    location,
    details: detailsOf({ run, rule, result, address, logical, cwe, suppression, message, said: [what, description.trim()] }),
  };
}

/** The run's context, or why it cannot be read. */
function readRun(run: unknown): RunContext | string {
  if (!isObject(run)) return `expected a run object, got ${kindOf(run)}`;
  // SARIF: null results mean the tool did not run to the end, which is not the same as "no findings".
  if (run.results === null) return 'results is null: the tool did not complete';
  if (run.results !== undefined && !Array.isArray(run.results)) return 'results is not an array';
  return runContext(run);
}

const executionFailed = (run: Obj) => list(run.invocations).some((invocation) => at(invocation, 'executionSuccessful') === false);

/**
 * The results of one run; a run that cannot be read is one error and the next run goes on. A run
 * whose invocation failed still has its results read, with an error saying they may be incomplete:
 * the import must not take what is missing from it as fixed.
 */
function* runItems(run: unknown, runIndex: number, firstRecord: number): Generator<ImportItem, number> {
  const context = readRun(run);
  let record = firstRecord;
  if (typeof context === 'string') {
    yield { kind: 'error', record: record++, message: `run ${runIndex}: ${context}` };
    return record;
  }
  if (executionFailed(run as Obj)) {
    yield { kind: 'error', record: record++, message: `run ${runIndex} (${context.source}): the tool reports its execution failed, so its results may be incomplete` };
  }
  for (const result of list((run as Obj).results)) yield sarifFinding(result, context, record++);
  return record;
}

/** A SARIF log is an object with a runs array: anything else is the wrong file, refused rather than read as nothing. */
function notSarif(): never {
  throw new MalformedImportError('not a SARIF file: expected a JSON object with a "runs" array at byte 0', 0);
}

async function* parseSarif(input: Readable): AsyncIterable<ImportItem> {
  const runs = jsonItems(input, ['runs']);
  let record = 0;
  let runIndex = 0;
  try {
    for await (const run of runs) {
      if (runs.topLevel !== 'object') notSarif();
      record = yield* runItems(run, runIndex++, record);
    }
  } catch (error) {
    rethrowMalformed(error, 'SARIF');
  }
  if (runs.topLevel !== 'object' || !Array.isArray(runs.header.runs)) notSarif();
}

export const sarifParser: ImportParser = {
  format: 'sarif',
  detect: detectSarif,
  parse: parseSarif,
};
