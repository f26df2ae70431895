import { isMap, isScalar, isSeq, type LineCounter, type Node, type YAMLMap } from 'yaml';
import { isConfigResourceType, nodeTypeFromConfigType } from './aws-node-type.js';
import { compileCondition, ConditionCompileError } from './cel.js';
import type { RuleIssue } from './rule-errors.js';
import {
  FINDING_TITLE_MAX,
  FRAMEWORKS,
  NIST_SOURCES,
  SEVERITIES,
  type FrameworkId,
  type FrameworkMapping,
  type GroupBy,
  type NistControl,
  type NistSource,
  type RemediationStep,
  type RuleDefinition,
  type Severity,
  type TerraformFix,
  type TerraformValue,
} from './rule-types.js';
import { readWhenMissing } from './when-missing.js';
import { CAUSE_PATTERN, EDGE_TYPE_PATTERN, groupBySourceProblem, NEEDS_ONE_SOURCE, toGroupBy } from './group-by.js';

/**
 * Turns one rule's YAML map into a RuleDefinition, reporting each problem at the line of the field
 * that has it. Works on the YAML node tree rather than plain JS values so every error has a line.
 */

export const RULE_ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const NODE_TYPE = /^[a-z][a-z0-9]*\.[a-z0-9]+\.[a-z0-9_]+$/;
const PROPERTY_PATH = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;
const CHECK_ID = /^[a-z0-9_]+$/;
const TERRAFORM_TYPE = /^[a-z][a-z0-9_]*$/;
const EDGE_TYPE = new RegExp(EDGE_TYPE_PATTERN);
const CAUSE = new RegExp(CAUSE_PATTERN);

const FIELDS = new Set([
  'id',
  'title',
  'description',
  'finding_title',
  'finding_description',
  'severity',
  'resource_type',
  'config_resource_type',
  'framework',
  'control_id',
  'framework_mappings',
  'nist_controls',
  'prowler_checks',
  'aws_config_rules',
  'reads',
  'condition',
  'remediation',
  'terraform',
  'exposure',
  'group_by',
  'when_missing',
  'when_missing_source',
  'optional_reads',
]);
/** A NIST SP 800-53 control or enhancement id as the catalog writes it: AC-2, SC-7(5). */
export const NIST_CONTROL_ID = /^[A-Z]{2}-\d+(?:\(\d+\))?$/;
const CONFIG_RULE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export interface RuleFile {
  /** As shown in messages. */
  file: string;
  lines: LineCounter;
}

class Reader {
  ok = true;
  constructor(
    private readonly at: RuleFile,
    private readonly issues: RuleIssue[],
    readonly rule: string | undefined,
  ) {}

  line(node: Node | null | undefined, fallback?: Node): number {
    const offset = node?.range?.[0] ?? fallback?.range?.[0] ?? 0;
    return this.at.lines.linePos(offset).line;
  }

  fail(node: Node | null | undefined, message: string, fallback?: Node): undefined {
    this.ok = false;
    this.issues.push({ file: this.at.file, line: this.line(node, fallback), rule: this.rule, message });
    return undefined;
  }

  /** The value node of `key`, or undefined (reported when required). */
  field(map: YAMLMap, key: string, required: boolean): Node | undefined {
    const pair = map.items.find((p) => isScalar(p.key) && p.key.value === key);
    const value = pair?.value as Node | null | undefined;
    if (value === undefined || value === null || (isScalar(value) && value.value === null)) {
      if (required) this.fail((pair?.key as Node | undefined) ?? map, `${key} is required`);
      return undefined;
    }
    return value;
  }

  string(map: YAMLMap, key: string, required = true): string | undefined {
    const node = this.field(map, key, required);
    if (node === undefined) return undefined;
    if (!isScalar(node) || typeof node.value !== 'string') {
      return this.fail(node, `${key} must be a string` + (isScalar(node) ? ' (quote it)' : ''));
    }
    if (node.value.trim() === '') return this.fail(node, `${key} must not be empty`);
    return node.value;
  }

  oneOf<T extends string>(map: YAMLMap, key: string, allowed: readonly T[]): T | undefined {
    const value = this.string(map, key);
    if (value === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(value)) {
      return this.fail(this.field(map, key, false), `${key} must be one of ${allowed.join(', ')} (got "${value}")`);
    }
    return value as T;
  }

  stringList(map: YAMLMap, key: string, pattern: RegExp, required: boolean): string[] | undefined {
    const node = this.field(map, key, required);
    if (node === undefined) return undefined;
    if (!isSeq(node) || node.items.length === 0) return this.fail(node, `${key} must be a non-empty list`);
    const values: string[] = [];
    for (const item of node.items as Node[]) {
      if (!isScalar(item) || typeof item.value !== 'string' || !pattern.test(item.value)) {
        this.fail(item, `${key}: "${isScalar(item) ? String(item.value) : '…'}" must match ${pattern}`, node);
      } else if (values.includes(item.value)) {
        this.fail(item, `${key}: "${item.value}" is listed twice`);
      } else {
        values.push(item.value);
      }
    }
    return values;
  }
}

/** Returns the rule, or undefined when it has problems (all pushed to `issues`). */
export function readRule(at: RuleFile, node: Node, issues: RuleIssue[]): RuleDefinition | undefined {
  if (!isMap(node)) {
    issues.push({ file: at.file, line: at.lines.linePos(node.range?.[0] ?? 0).line, message: 'each rule must be a mapping' });
    return undefined;
  }
  const idNode = node.items.find((p) => isScalar(p.key) && p.key.value === 'id')?.value;
  const rawId = isScalar(idNode) && typeof idNode.value === 'string' ? idNode.value : undefined;
  const r = new Reader(at, issues, rawId);

  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '?';
    if (!FIELDS.has(key)) r.fail(pair.key as Node, `unknown field "${key}"`);
  }

  const id = r.string(node, 'id');
  if (id !== undefined && !RULE_ID.test(id)) {
    r.fail(idNode as Node, 'id must be lower-case letters, digits and single hyphens (no colons: finding ids are <rule_id>:<resource_id>)');
  }
  const title = r.string(node, 'title');
  const description = r.string(node, 'description');
  const findingTitle = readFindingTitle(r, node, title);
  const findingDescription = r.string(node, 'finding_description');
  const severity = r.oneOf<Severity>(node, 'severity', SEVERITIES);
  const resourceType = r.string(node, 'resource_type');
  if (resourceType !== undefined && !NODE_TYPE.test(resourceType)) {
    r.fail(r.field(node, 'resource_type', false), `resource_type must be <provider>.<service>.<type> in lower case (got "${resourceType}")`);
  }
  const configType = r.string(node, 'config_resource_type', false);
  if (configType !== undefined) {
    const configNode = r.field(node, 'config_resource_type', false);
    if (!isConfigResourceType(configType)) {
      r.fail(configNode, `config_resource_type must look like AWS::Service::Type (got "${configType}")`);
    } else if (resourceType !== undefined && nodeTypeFromConfigType(configType) !== resourceType) {
      r.fail(configNode, `config_resource_type ${configType} is node type ${nodeTypeFromConfigType(configType)}, not ${resourceType}`);
    }
  }
  const framework = r.oneOf<FrameworkId>(node, 'framework', FRAMEWORKS);
  const controlId = r.string(node, 'control_id');
  const mappings = readMappings(r, node, framework, controlId);
  const nistControls = readNistControls(r, node, framework, controlId);
  const prowlerChecks = r.stringList(node, 'prowler_checks', CHECK_ID, false);
  const awsConfigRules = r.stringList(node, 'aws_config_rules', CONFIG_RULE, false);
  const reads = r.stringList(node, 'reads', PROPERTY_PATH, true);
  const whenMissing = readWhenMissing(r, node, reads);
  const condition = readCondition(r, node);
  const remediation = readRemediation(r, node);
  const terraform = readTerraform(r, node);
  // Optional: a violation means the resource is reachable from the Internet (a risk-score factor).
  const exposure = r.field(node, 'exposure', false) === undefined ? undefined : r.oneOf(node, 'exposure', ['internet'] as const);
  const groupBy = readGroupBy(r, node);

  if (!r.ok) return undefined;
  const rule: RuleDefinition = {
    id: id!,
    title: title!,
    description: description!,
    finding_title: findingTitle!,
    finding_description: findingDescription!,
    severity: severity!,
    resource_type: resourceType!,
    ...(configType === undefined ? {} : { config_resource_type: configType }),
    framework: framework!,
    control_id: controlId!,
    framework_mappings: mappings!,
    nist_controls: nistControls!,
    condition: condition!,
    remediation: remediation!,
    ...(terraform === undefined ? {} : { terraform }),
    ...(exposure === undefined ? {} : { exposure }),
    ...(groupBy === undefined ? {} : { group_by: groupBy }),
    reads: reads!,
    ...whenMissing,
    ...(prowlerChecks === undefined ? {} : { prowler_checks: prowlerChecks }),
    ...(awsConfigRules === undefined ? {} : { aws_config_rules: awsConfigRules }),
    builtin: true,
    source: { file: at.file, line: r.line(node) },
  };
  return rule;
}

function readMappings(r: Reader, map: YAMLMap, framework?: FrameworkId, controlId?: string): FrameworkMapping[] | undefined {
  const node = r.field(map, 'framework_mappings', true);
  if (node === undefined) return undefined;
  if (!isSeq(node)) return r.fail(node, 'framework_mappings must be a list of {framework, control_id}');
  const out: FrameworkMapping[] = [];
  for (const item of node.items as Node[]) {
    if (!isMap(item)) {
      r.fail(item, 'each framework_mappings entry must be {framework, control_id}', node);
      continue;
    }
    for (const pair of item.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : '?';
      if (key !== 'framework' && key !== 'control_id') r.fail(pair.key as Node, `framework_mappings: unknown field "${key}"`);
    }
    const fw = r.oneOf<FrameworkId>(item, 'framework', FRAMEWORKS);
    const id = r.string(item, 'control_id');
    if (fw === undefined || id === undefined) continue;
    if (fw === framework && id === controlId) r.fail(item, `framework_mappings repeats the primary control ${fw} ${id}`);
    else if (out.some((m) => m.framework === fw && m.control_id === id)) r.fail(item, `framework_mappings lists ${fw} ${id} twice`);
    else out.push({ framework: fw, control_id: id });
  }
  return out;
}

/** One line, at most FINDING_TITLE_MAX characters, and worded differently from the check's title. */
function readFindingTitle(r: Reader, map: YAMLMap, title: string | undefined): string | undefined {
  const value = r.string(map, 'finding_title');
  if (value === undefined) return undefined;
  const node = r.field(map, 'finding_title', false);
  if (/[\r\n]/.test(value.trim())) return r.fail(node, 'finding_title must be one line');
  if (value.length > FINDING_TITLE_MAX) return r.fail(node, `finding_title must be at most ${FINDING_TITLE_MAX} characters (got ${value.length})`);
  if (title !== undefined && value.trim().toLowerCase() === title.trim().toLowerCase()) {
    return r.fail(node, 'finding_title must word the failure ("… is not encrypted"), not repeat the title');
  }
  return value.trim();
}

/**
 * One or two primary NIST controls, each `{control_id, source}`. A rule whose primary framework is
 * NIST SP 800-53 has its control_id among them, so the controls it fails in NIST are exactly these.
 */
function readNistControls(r: Reader, map: YAMLMap, framework?: FrameworkId, controlId?: string): NistControl[] | undefined {
  const node = r.field(map, 'nist_controls', true);
  if (node === undefined) return undefined;
  if (!isSeq(node) || node.items.length < 1 || node.items.length > 2) {
    return r.fail(node, 'nist_controls must list one or two {control_id, source}: the controls that most directly address the rule');
  }
  const out: NistControl[] = [];
  for (const item of node.items as Node[]) {
    if (!isMap(item)) {
      r.fail(item, 'each nist_controls entry must be {control_id, source}', node);
      continue;
    }
    for (const pair of item.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : '?';
      if (key !== 'control_id' && key !== 'source') r.fail(pair.key as Node, `nist_controls: unknown field "${key}"`);
    }
    const id = r.string(item, 'control_id');
    const source = r.oneOf<NistSource>(item, 'source', NIST_SOURCES);
    if (id === undefined || source === undefined) continue;
    if (!NIST_CONTROL_ID.test(id)) r.fail(r.field(item, 'control_id', true), `nist_controls: "${id}" is not a NIST SP 800-53 id such as SC-28 or SC-7(5)`);
    else if (out.some((c) => c.control_id === id)) r.fail(item, `nist_controls lists ${id} twice`);
    else out.push({ control_id: id, source });
  }
  if (framework === 'nist-800-53' && controlId !== undefined && out.length === node.items.length && !out.some((c) => c.control_id === controlId)) {
    return r.fail(node, `the primary control nist-800-53 ${controlId} must be one of nist_controls`);
  }
  return out;
}

function readCondition(r: Reader, map: YAMLMap): string | undefined {
  const condition = r.string(map, 'condition');
  if (condition === undefined) return undefined;
  try {
    compileCondition(condition);
  } catch (err) {
    if (!(err instanceof ConditionCompileError)) throw err;
    const where = err.range ? ` (at character ${err.range.start + 1} of the condition)` : '';
    return r.fail(r.field(map, 'condition', true), `condition does not compile: ${err.summary}${where}`);
  }
  return condition;
}

function readRemediation(r: Reader, map: YAMLMap): RuleDefinition['remediation'] | undefined {
  const node = r.field(map, 'remediation', true);
  if (node === undefined) return undefined;
  if (!isMap(node)) return r.fail(node, 'remediation must be a mapping with summary and steps');
  const summary = r.string(node, 'summary');
  const stepsNode = r.field(node, 'steps', true);
  if (stepsNode === undefined) return undefined;
  if (!isSeq(stepsNode) || stepsNode.items.length === 0) return r.fail(stepsNode, 'remediation.steps must be a non-empty list');
  const steps: RemediationStep[] = [];
  (stepsNode.items as Node[]).forEach((item, index) => {
    if (!isMap(item)) {
      r.fail(item, 'each remediation step must be {action, command}', stepsNode);
      return;
    }
    const action = r.string(item, 'action');
    const command = r.string(item, 'command');
    if (action !== undefined && command !== undefined) steps.push({ order: index + 1, action, command });
  });
  return summary === undefined ? undefined : { summary, steps };
}

/** Optional root cause of a violation: `{cause, self: true}`, `{cause, path}` or `{cause, edge, node_type?}`. */
function readGroupBy(r: Reader, map: YAMLMap): GroupBy | undefined {
  const node = r.field(map, 'group_by', false);
  if (node === undefined) return undefined;
  if (!isMap(node)) return r.fail(node, 'group_by must be a mapping {cause, self | path | edge}');
  const allowed = ['cause', 'self', 'path', 'edge', 'node_type'];
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '?';
    if (!allowed.includes(key)) r.fail(pair.key as Node, `group_by: unknown field "${key}"`);
  }
  const cause = r.string(node, 'cause');
  if (cause !== undefined && !CAUSE.test(cause)) {
    r.fail(r.field(node, 'cause', true), `group_by.cause must be a short name of letters, digits, spaces and hyphens (got "${cause}")`);
  }
  const selfNode = r.field(node, 'self', false);
  const path = r.string(node, 'path', false);
  const edge = r.string(node, 'edge', false);
  const nodeType = r.string(node, 'node_type', false);
  const problem = groupBySourceProblem({ self: selfNode, path, edge, node_type: nodeType });
  if (problem === NEEDS_ONE_SOURCE) return r.fail(node, problem);
  if (selfNode !== undefined && !(isScalar(selfNode) && selfNode.value === true)) return r.fail(selfNode, 'group_by.self must be true');
  if (path !== undefined && !PROPERTY_PATH.test(path))
    return r.fail(r.field(node, 'path', true), `group_by.path must be a property path in schema form such as configuration.vpcId (got "${path}")`);
  if (edge !== undefined && !EDGE_TYPE.test(edge)) return r.fail(r.field(node, 'edge', true), `group_by.edge must be an edge type such as uses_security_group (got "${edge}")`);
  if (problem) return r.fail(r.field(node, 'node_type', true), problem);
  if (nodeType !== undefined && !NODE_TYPE.test(nodeType))
    return r.fail(r.field(node, 'node_type', true), `group_by.node_type must be <provider>.<service>.<type> (got "${nodeType}")`);
  if (cause === undefined) return undefined;
  return toGroupBy({ cause, path, edge, node_type: nodeType });
}

function readTerraform(r: Reader, map: YAMLMap): TerraformFix | undefined {
  const node = r.field(map, 'terraform', false);
  if (node === undefined) return undefined;
  if (!isMap(node)) return r.fail(node, 'terraform must be a mapping {resource, add_block | set}');
  const resource = r.string(node, 'resource');
  if (resource !== undefined && !TERRAFORM_TYPE.test(resource)) r.fail(r.field(node, 'resource', true), 'terraform.resource must be a Terraform resource type');
  const addBlock = r.string(node, 'add_block', false);
  const setNode = r.field(node, 'set', false);
  if ((addBlock === undefined) === (setNode === undefined)) {
    return r.fail(node, 'terraform needs exactly one of add_block or set');
  }
  if (resource === undefined) return undefined;
  if (addBlock !== undefined) return { resource, add_block: addBlock };
  if (!isMap(setNode) || setNode.items.length === 0) return r.fail(setNode, 'terraform.set must be a non-empty mapping of attribute: value');
  const set: Record<string, TerraformValue> = {};
  for (const pair of setNode.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    const value = (pair.value as Node | null)?.toJSON() as unknown;
    const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
    if (!TERRAFORM_TYPE.test(key)) r.fail(pair.key as Node, `terraform.set: "${key}" is not an attribute name`);
    else if (scalar(value) || (Array.isArray(value) && value.every(scalar))) set[key] = value as TerraformValue;
    else r.fail(pair.value as Node, `terraform.set.${key} must be a string, number, boolean or list of them`, pair.key as Node);
  }
  return { resource, set };
}
