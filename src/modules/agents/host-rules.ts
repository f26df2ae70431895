import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import YAML from 'yaml';
import { projectPath, projectRoot } from '../../platform/paths.js';
import { frameworks } from '../compliance/frameworks.js';
import { FRAMEWORKS, SEVERITIES, type FrameworkId, type FrameworkMapping, type Remediation, type Severity } from '../compliance/rules/rule-types.js';
import { COLLECTIONS, type CollectionName } from './report-schema.js';

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
 *   state. A rule whose collections (`collection`, `requires`) were not collected is not evaluated.
 * - `vulnerable-package` and `config-drift`: text, severity and controls of the findings the ingest
 *   itself derives (CVE matches, file changes); `{placeholders}` are filled per finding.
 *
 * `host` holds the report's facts (`hostname`, `os`, `machine_id`, ...) and every collection by name.
 */

export type HostRuleKind = 'condition' | 'vulnerable-package' | 'config-drift';

interface RuleBase {
  id: string;
  kind: HostRuleKind;
  title: string;
  description: string;
  severity: Severity;
  framework: FrameworkId;
  control_id: string;
  framework_mappings: FrameworkMapping[];
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
  compiled: { condition: ParseResult; evidence: ParseResult | null; indeterminate: ParseResult | null };
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
  'id', 'kind', 'title', 'description', 'severity', 'framework', 'control_id', 'framework_mappings', 'collection', 'requires',
  'condition', 'evidence', 'indeterminate', 'remediation',
]);

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
  if (!frameworks().get(fw as FrameworkId)!.controls.has(id)) throw new HostRuleError(`${where}: control ${fw} ${id} is not in content/frameworks/${fw}.json`);
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
    title: text(raw.title, `${at}: title`)!,
    description: text(raw.description, `${at}: description`)!,
    severity,
    framework: primary.framework,
    control_id: primary.control_id,
    framework_mappings: mappings,
    remediation,
    source: { file, line },
  };
  if (kind !== 'condition') {
    for (const field of ['collection', 'requires', 'condition', 'evidence', 'indeterminate']) {
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
  return {
    ...base,
    kind,
    collection,
    requires,
    condition,
    evidence,
    indeterminate,
    compiled: {
      condition: compile(condition, `${at}: condition`),
      evidence: evidence ? compile(evidence, `${at}: evidence`) : null,
      indeterminate: indeterminate ? compile(indeterminate, `${at}: indeterminate`) : null,
    },
  };
}

/** Loads and checks every `*.yml` of the directory; any problem throws naming file and rule. */
export function loadHostRules(dir: string = defaultHostRulesDir()): HostRuleSet {
  if (!existsSync(dir)) throw new HostRuleError(`${display(dir)}: host rule directory not found`);
  const all: HostRule[] = [];
  const seen = new Set<string>();
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.yml')).sort()) {
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

export type RuleOutcome =
  | { state: 'violated'; evidence: string[]; items: number }
  | { state: 'compliant' }
  | { state: 'not_evaluated'; reason: string };

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

/**
 * Evaluates one rule. A condition that cannot be evaluated for an item (a missing field, a wrong type)
 * makes the rule not evaluated, never violated: a malformed item must not open or resolve findings.
 */
export function evaluateRule(rule: ConditionRule, input: RuleInput): RuleOutcome {
  const missing = rule.requires.filter((c) => !input.collected.has(c));
  if (missing.length) return { state: 'not_evaluated', reason: `not collected: ${missing.join(', ')}` };
  try {
    if (!rule.collection) {
      const context = { host: input.host, item: {} };
      const violated = rule.compiled.condition(context);
      if (typeof violated !== 'boolean') return { state: 'not_evaluated', reason: 'condition did not return a bool' };
      return violated ? { state: 'violated', evidence: evidenceOf(rule, context), items: 0 } : { state: 'compliant' };
    }
    const items = (input.host[rule.collection] as Array<Record<string, unknown>> | undefined) ?? [];
    const evidence: string[] = [];
    let violations = 0;
    let indeterminate = 0;
    for (const item of items) {
      const context = { host: input.host, item };
      const violated = rule.compiled.condition(context);
      if (typeof violated !== 'boolean') return { state: 'not_evaluated', reason: 'condition did not return a bool' };
      if (violated) {
        violations++;
        if (evidence.length < MAX_EVIDENCE) evidence.push(...evidenceOf(rule, context));
      } else if (rule.compiled.indeterminate && rule.compiled.indeterminate(context) === true) {
        indeterminate++;
      }
    }
    if (violations > 0) return { state: 'violated', evidence: evidence.slice(0, MAX_EVIDENCE), items: violations };
    if (indeterminate > 0) return { state: 'not_evaluated', reason: `${indeterminate} item(s) cannot be judged` };
    return { state: 'compliant' };
  } catch (error) {
    return { state: 'not_evaluated', reason: `evaluation error: ${(error as Error).message.split('\n')[0]}` };
  }
}
