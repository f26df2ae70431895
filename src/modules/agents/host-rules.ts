import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import YAML from 'yaml';
import { projectPath, projectRoot } from '../../platform/paths.js';
import { frameworks } from '../compliance/index.js';
import {
  FINDING_TITLE_MAX,
  FRAMEWORKS,
  NIST_SOURCES,
  SEVERITIES,
  type FrameworkId,
  type FrameworkMapping,
  type NistControl,
  type NistSource,
  type Remediation,
  type Severity,
} from '../compliance/index.js';
import { splitMappings } from '../compliance/index.js';
import { COLLECTIONS, type CollectionName } from './report-schema.js';
import { WHEN_MISSING, type WhenMissing } from '../compliance/index.js';

/**
 * Host rules: data in `content/rules/host/*.yml` (see the README there), evaluated by the ingest
 * against each processed report. The files use `.yml` on purpose: the compliance engine loads every
 * `*.yaml` under content/rules as AWS-style rules over node properties, and host rules are not that —
 * they read the report's collections, which never enter the node.
 *
 * Three kinds:
 * - `condition` (default): CEL, true when the host VIOLATES the rule. With `collection`, evaluated once
 *   per item of that collection (variables `item` and `host`); without, once for the host (`host`).
 *   `evidence` (CEL, string or list of strings) names what violates, for the finding's details;
 *   `indeterminate` (CEL, per item) marks items the rule cannot judge (e.g. password status unknown):
 *   when no item violates and one is indeterminate, the rule is not decided and its finding keeps its
 *   state. `when_missing` (violation | pass | unknown, with `when_missing_source`) is what the rule
 *   concludes when the host lacks the data it judges: a collection it needs (`collection`,
 *   `requires`) was not collected, or `missing` (CEL over `host`) is true. A rule not decided is an
 *   unknown outcome, recorded by the ingest (evaluation_unknowns), never a pass.
 * - `vulnerable-package` and `config-drift`: text, severity and controls of the findings the ingest
 *   itself derives (CVE matches, file changes); `{placeholders}` are filled per finding.
 *
 * `host` holds the report's facts (`hostname`, `os`, `machine_id`, ...), every collection by name, and
 * `collectors` (each collector's `{status, reason}`).
 */

export type HostRuleKind = 'condition' | 'vulnerable-package' | 'config-drift';

interface RuleBase {
  id: string;
  kind: HostRuleKind;
  /** The check, worded as the desired state. */
  title: string;
  description: string;
  /** The failure wording its findings carry (templates with {placeholders} for the derived kinds). */
  finding_title: string;
  finding_description: string;
  severity: Severity;
  framework: FrameworkId;
  control_id: string;
  /** The mapped controls a failure fails (the primary NIST controls and every other framework's). */
  framework_mappings: FrameworkMapping[];
  /** NIST mappings that are not primary: shown, never counted (compliance/rules/primary-controls.ts). */
  related_mappings: FrameworkMapping[];
  /** One or two primary NIST SP 800-53 controls, each from a cited mapping (ComplianceAsCode). */
  nist_controls: NistControl[];
  /** The ComplianceAsCode rules the rule corresponds to: what a `compliance-as-code` citation is looked up by. */
  cac_rules: string[];
  remediation: Remediation;
  source: { file: string; line: number };
}

export interface ConditionRule extends RuleBase {
  kind: 'condition';
  collection: CollectionName | null;
  requires: CollectionName[];
  condition: string;
  evidence: string | null;
  indeterminate: string | null;
  /**
   * What the rule concludes when the host lacks the data it judges (issue 22, "fail closed"): a
   * required collection was not collected, or `missing` (CEL over `host`) is true. See the README.
   */
  when_missing: WhenMissing;
  /** Why: the documentation of the default it rests on, or why nothing decides. */
  when_missing_source: string;
  missing: string | null;
  compiled: { condition: ParseResult; evidence: ParseResult | null; indeterminate: ParseResult | null; missing: ParseResult | null };
}

export interface TemplateRule extends RuleBase {
  kind: 'vulnerable-package' | 'config-drift';
}

export type HostRule = ConditionRule | TemplateRule;

export interface HostRuleSet {
  conditions: ConditionRule[];
  vulnerablePackage: TemplateRule;
  configDrift: TemplateRule;
  all: HostRule[];
}

export class HostRuleError extends Error {
  override name = 'HostRuleError';
}

const RULE_ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const FIELDS = new Set([
  'id',
  'kind',
  'title',
  'description',
  'finding_title',
  'finding_description',
  'severity',
  'framework',
  'control_id',
  'framework_mappings',
  'nist_controls',
  'cac_rules',
  'collection',
  'requires',
  'condition',
  'evidence',
  'indeterminate',
  'remediation',
  'when_missing',
  'when_missing_source',
  'missing',
]);
const CAC_RULE = /^[a-z0-9_]+$/;

let environment: Environment | undefined;
function env(): Environment {
  environment ??= new Environment().registerVariable('item', 'map').registerVariable('host', 'map');
  return environment;
}

function compile(expression: string, where: string): ParseResult {
  let parsed: ParseResult;
  try {
    parsed = env().parse(expression);
  } catch (error) {
    throw new HostRuleError(`${where}: does not compile: ${(error as Error).message.split('\n')[0]}`);
  }
  const checked = parsed.check();
  if (!checked.valid) throw new HostRuleError(`${where}: does not type-check: ${checked.error?.message.split('\n')[0] ?? 'invalid'}`);
  return parsed;
}

export const defaultHostRulesDir = (): string => projectPath('content', 'rules', 'host');

function display(path: string): string {
  const rel = relative(projectRoot, path);
  return rel.startsWith('..') ? path : rel;
}

function text(value: unknown, where: string, required = true): string | null {
  if (value === undefined || value === null) {
    if (required) throw new HostRuleError(`${where} is required`);
    return null;
  }
  if (typeof value !== 'string' || value.trim() === '') throw new HostRuleError(`${where} must be a non-empty string`);
  return value.trim();
}

function control(framework: unknown, controlId: unknown, where: string): FrameworkMapping {
  const fw = text(framework, `${where}: framework`)!;
  if (!(FRAMEWORKS as readonly string[]).includes(fw)) throw new HostRuleError(`${where}: framework must be one of ${FRAMEWORKS.join(', ')} (got "${fw}")`);
  const id = text(controlId, `${where}: control_id`)!;
  if (
    !frameworks()
      .get(fw as FrameworkId)!
      .controls.has(id)
  )
    throw new HostRuleError(`${where}: control ${fw} ${id} is not in content/frameworks/${fw}.json`);
  return { framework: fw as FrameworkId, control_id: id };
}

function readRule(raw: Record<string, unknown>, where: string, line: number, file: string): HostRule {
  for (const key of Object.keys(raw)) if (!FIELDS.has(key)) throw new HostRuleError(`${where}: unknown field "${key}"`);
  const id = text(raw.id, `${where}: id`)!;
  if (!RULE_ID.test(id)) throw new HostRuleError(`${where}: id "${id}" must be lower-case words joined by "-" (no colons)`);
  const at = `${where} (${id})`;
  const kind = (raw.kind ?? 'condition') as HostRuleKind;
  if (!['condition', 'vulnerable-package', 'config-drift'].includes(kind)) throw new HostRuleError(`${at}: unknown kind "${String(raw.kind)}"`);
  const severity = text(raw.severity, `${at}: severity`) as Severity;
  if (!SEVERITIES.includes(severity)) throw new HostRuleError(`${at}: severity must be one of ${SEVERITIES.join(', ')}`);
  const primary = control(raw.framework, raw.control_id, at);
  const mappingsRaw = raw.framework_mappings ?? [];
  if (!Array.isArray(mappingsRaw)) throw new HostRuleError(`${at}: framework_mappings must be a list`);
  const mappings = mappingsRaw.map((m: Record<string, unknown>) => control(m?.framework, m?.control_id, `${at}: framework_mappings`));
  const keys = [primary, ...mappings].map((m) => `${m.framework} ${m.control_id}`);
  if (new Set(keys).size !== keys.length) throw new HostRuleError(`${at}: a control is listed twice`);
  const title = text(raw.title, `${at}: title`)!;
  const findingTitle = text(raw.finding_title, `${at}: finding_title`)!;
  if (findingTitle.toLowerCase() === title.toLowerCase()) throw new HostRuleError(`${at}: finding_title must word the failure, not repeat the title`);
  if (findingTitle.length > FINDING_TITLE_MAX || /[\r\n]/.test(findingTitle))
    throw new HostRuleError(`${at}: finding_title must be one line of at most ${FINDING_TITLE_MAX} characters`);
  const nistControls = readNistControls(raw.nist_controls, primary, at);
  const cacRaw = raw.cac_rules ?? [];
  if (!Array.isArray(cacRaw) || cacRaw.some((r) => typeof r !== 'string' || !CAC_RULE.test(r)))
    throw new HostRuleError(`${at}: cac_rules must be a list of ComplianceAsCode rule ids`);
  const { counted, related } = splitMappings({ framework: primary.framework, control_id: primary.control_id, framework_mappings: mappings, nist_controls: nistControls });
  const remediationRaw = raw.remediation as { summary?: unknown; steps?: unknown } | undefined;
  if (!remediationRaw || typeof remediationRaw !== 'object') throw new HostRuleError(`${at}: remediation is required`);
  const stepsRaw = remediationRaw.steps;
  if (!Array.isArray(stepsRaw) || stepsRaw.length === 0) throw new HostRuleError(`${at}: remediation.steps must be a non-empty list`);
  const remediation: Remediation = {
    summary: text(remediationRaw.summary, `${at}: remediation.summary`)!,
    steps: stepsRaw.map((s: Record<string, unknown>, i) => ({
      order: i + 1,
      action: text(s?.action, `${at}: remediation.steps[${i}].action`)!,
      command: text(s?.command, `${at}: remediation.steps[${i}].command`)!,
    })),
  };
  const base = {
    id,
    title,
    description: text(raw.description, `${at}: description`)!,
    finding_title: findingTitle,
    finding_description: text(raw.finding_description, `${at}: finding_description`)!,
    severity,
    framework: primary.framework,
    control_id: primary.control_id,
    framework_mappings: counted,
    related_mappings: related,
    nist_controls: nistControls,
    cac_rules: cacRaw as string[],
    remediation,
    source: { file, line },
  };
  if (kind !== 'condition') {
    for (const field of ['collection', 'requires', 'condition', 'evidence', 'indeterminate', 'when_missing', 'when_missing_source', 'missing']) {
      if (raw[field] !== undefined) throw new HostRuleError(`${at}: a ${kind} rule takes no ${field}`);
    }
    return { ...base, kind };
  }
  const collection = text(raw.collection, `${at}: collection`, false) as CollectionName | null;
  if (collection && !COLLECTIONS.includes(collection)) throw new HostRuleError(`${at}: unknown collection "${collection}"`);
  const requiresRaw = raw.requires ?? [];
  if (!Array.isArray(requiresRaw)) throw new HostRuleError(`${at}: requires must be a list of collections`);
  for (const r of requiresRaw) if (!COLLECTIONS.includes(r as CollectionName)) throw new HostRuleError(`${at}: requires names unknown collection "${String(r)}"`);
  const requires = [...new Set([...(collection ? [collection] : []), ...(requiresRaw as CollectionName[])])];
  if (requires.length === 0) throw new HostRuleError(`${at}: a rule needs a collection or requires`);
  const condition = text(raw.condition, `${at}: condition`)!;
  const evidence = text(raw.evidence, `${at}: evidence`, false);
  const indeterminate = text(raw.indeterminate, `${at}: indeterminate`, false);
  if (indeterminate && !collection) throw new HostRuleError(`${at}: indeterminate is for per-item rules (with collection)`);
  const whenMissing = text(raw.when_missing, `${at}: when_missing`) as WhenMissing;
  if (!WHEN_MISSING.includes(whenMissing)) throw new HostRuleError(`${at}: when_missing must be one of ${WHEN_MISSING.join(', ')} (got "${whenMissing}")`);
  const whenMissingSource = text(raw.when_missing_source, `${at}: when_missing_source`)!;
  const missing = text(raw.missing, `${at}: missing`, false);
  return {
    ...base,
    kind,
    collection,
    requires,
    condition,
    evidence,
    indeterminate,
    when_missing: whenMissing,
    when_missing_source: whenMissingSource,
    missing,
    compiled: {
      condition: compile(condition, `${at}: condition`),
      evidence: evidence ? compile(evidence, `${at}: evidence`) : null,
      indeterminate: indeterminate ? compile(indeterminate, `${at}: indeterminate`) : null,
      missing: missing ? compile(missing, `${at}: missing`) : null,
    },
  };
}

/** One or two primary NIST controls from the catalog; a NIST-primary rule's control_id is one of them. */
function readNistControls(raw: unknown, primary: FrameworkMapping, at: string): NistControl[] {
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > 2) throw new HostRuleError(`${at}: nist_controls must list one or two {control_id, source}`);
  const out = raw.map((entry: Record<string, unknown>, i) => {
    const where = `${at}: nist_controls[${i}]`;
    const source = text(entry?.source, `${where}.source`) as NistSource;
    if (!NIST_SOURCES.includes(source)) throw new HostRuleError(`${where}.source must be one of ${NIST_SOURCES.join(', ')} (got "${source}")`);
    return { control_id: control('nist-800-53', entry?.control_id, where).control_id, source };
  });
  if (new Set(out.map((c) => c.control_id)).size !== out.length) throw new HostRuleError(`${at}: nist_controls lists a control twice`);
  if (primary.framework === 'nist-800-53' && !out.some((c) => c.control_id === primary.control_id)) {
    throw new HostRuleError(`${at}: the primary control nist-800-53 ${primary.control_id} must be one of nist_controls`);
  }
  return out;
}

/** Loads and checks every `*.yml` of the directory; any problem throws naming file and rule. */
export function loadHostRules(dir: string = defaultHostRulesDir()): HostRuleSet {
  if (!existsSync(dir)) throw new HostRuleError(`${display(dir)}: host rule directory not found`);
  const all: HostRule[] = [];
  const seen = new Set<string>();
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith('.yml'))
    .sort()) {
    const path = join(dir, name);
    const file = display(path);
    const lines = new YAML.LineCounter();
    const doc = YAML.parseDocument(readFileSync(path, 'utf8'), { lineCounter: lines, uniqueKeys: true });
    if (doc.errors.length) throw new HostRuleError(`${file}: invalid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
    const root = doc.toJS() as { rules?: unknown } | null;
    if (!root || typeof root !== 'object' || !Array.isArray(root.rules)) throw new HostRuleError(`${file}: expected a mapping with a rules list`);
    for (const key of Object.keys(root)) if (key !== 'rules') throw new HostRuleError(`${file}: unknown top-level field "${key}"`);
    const nodes = (doc.get('rules', true) as YAML.YAMLSeq).items as YAML.Node[];
    root.rules.forEach((raw, i) => {
      const line = lines.linePos(nodes[i]?.range?.[0] ?? 0).line;
      const where = `${file}:${line}`;
      if (!raw || typeof raw !== 'object') throw new HostRuleError(`${where}: a rule must be a mapping`);
      const rule = readRule(raw as Record<string, unknown>, where, line, file);
      if (seen.has(rule.id)) throw new HostRuleError(`${where}: duplicate rule id "${rule.id}"`);
      seen.add(rule.id);
      all.push(rule);
    });
  }
  const single = (kind: TemplateRule['kind']): TemplateRule => {
    const found = all.filter((r): r is TemplateRule => r.kind === kind);
    if (found.length !== 1) throw new HostRuleError(`${display(dir)}: exactly one rule of kind ${kind} is needed (found ${found.length})`);
    return found[0]!;
  };
  return {
    conditions: all.filter((r): r is ConditionRule => r.kind === 'condition'),
    vulnerablePackage: single('vulnerable-package'),
    configDrift: single('config-drift'),
    all,
  };
}

let cached: HostRuleSet | null = null;

/** The shipped host rules, loaded once per process. */
export function hostRules(): HostRuleSet {
  cached ??= loadHostRules();
  return cached;
}

/** Fills `{name}` placeholders; unknown names stay as written. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([a-z_]+)\}/g, (whole, key: string) => values[key] ?? whole);
}

/**
 * `not_evaluated` is the unknown outcome (recorded in evaluation_unknowns): `missing` names the
 * collections not collected (or the rule's missing data), `error` says the condition failed.
 */
export type RuleOutcome =
  { state: 'violated'; evidence: string[]; items: number } | { state: 'compliant' } | { state: 'not_evaluated'; reason: string; missing: string[]; error: boolean };

export interface RuleInput {
  /** The host variable: facts plus every collection. */
  host: Record<string, unknown>;
  /** Collections that were collected completely enough to judge (status ok or partial, and present). */
  collected: ReadonlySet<string>;
}

const MAX_EVIDENCE = 50;

function evidenceOf(rule: ConditionRule, context: Record<string, unknown>): string[] {
  if (!rule.compiled.evidence) return [];
  try {
    const value = rule.compiled.evidence(context);
    if (typeof value === 'string') return [value];
    if (Array.isArray(value)) return value.map(String);
    return [String(value)];
  } catch (error) {
    return [`(evidence unavailable: ${(error as Error).message.split('\n')[0]})`];
  }
}

const unknownOutcome = (reason: string, missing: string[] = [], error = false): RuleOutcome => ({ state: 'not_evaluated', reason, missing, error });

/**
 * What the rule's when_missing makes of a host that lacks its data (`lacking` names what): a
 * violation, a pass, or unknown (not evaluated). Never a silent pass: a pass is what the content declares.
 */
function judgeMissing(rule: ConditionRule, lacking: string[], reason: string): RuleOutcome {
  if (rule.when_missing === 'violation') return { state: 'violated', evidence: [reason], items: 0 };
  if (rule.when_missing === 'pass') return { state: 'compliant' };
  return unknownOutcome(reason, lacking);
}

/**
 * Evaluates one rule. A host lacking the data the rule judges (a required collection not collected,
 * or the rule's `missing` true) gets the rule's when_missing. A condition that cannot be evaluated for
 * an item (a missing field, a wrong type) makes the rule not evaluated, never violated: a malformed
 * item must not open or resolve findings.
 */
export function evaluateRule(rule: ConditionRule, input: RuleInput): RuleOutcome {
  const notCollected = rule.requires.filter((c) => !input.collected.has(c));
  if (notCollected.length) return judgeMissing(rule, notCollected, `not collected: ${notCollected.join(', ')}`);
  try {
    if (rule.compiled.missing && rule.compiled.missing({ host: input.host, item: {} }) === true) {
      return judgeMissing(rule, [rule.missing!], `the host lacks what the rule judges (${rule.missing})`);
    }
    if (!rule.collection) {
      const context = { host: input.host, item: {} };
      const violated = rule.compiled.condition(context);
      if (typeof violated !== 'boolean') return unknownOutcome('condition did not return a bool', [], true);
      return violated ? { state: 'violated', evidence: evidenceOf(rule, context), items: 0 } : { state: 'compliant' };
    }
    const items = (input.host[rule.collection] as Array<Record<string, unknown>> | undefined) ?? [];
    const evidence: string[] = [];
    let violations = 0;
    let indeterminate = 0;
    for (const item of items) {
      const context = { host: input.host, item };
      const violated = rule.compiled.condition(context);
      if (typeof violated !== 'boolean') return unknownOutcome('condition did not return a bool', [], true);
      if (violated) {
        violations++;
        if (evidence.length < MAX_EVIDENCE) evidence.push(...evidenceOf(rule, context));
      } else if (rule.compiled.indeterminate && rule.compiled.indeterminate(context) === true) {
        indeterminate++;
      }
    }
    if (violations > 0) return { state: 'violated', evidence: evidence.slice(0, MAX_EVIDENCE), items: violations };
    if (indeterminate > 0) return unknownOutcome(`${indeterminate} item(s) cannot be judged`);
    return { state: 'compliant' };
  } catch (error) {
    return unknownOutcome(`evaluation error: ${(error as Error).message.split('\n')[0]}`, [], true);
  }
}
