import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { projectPath, projectRoot } from '../../../platform/paths.js';
import { RuleContentError, type RuleIssue } from './rule-errors.js';
import type { RuleDefinition } from './rule-types.js';
import { readRule, type RuleFile } from './rule-validation.js';

export { RuleContentError, type RuleIssue } from './rule-errors.js';

const SERVICE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const defaultRulesDir = (): string => projectPath('content', 'rules');

/**
 * Loads every `*.yaml` under `dir` (recursively, in path order) as built-in rules. Every problem in
 * every file is collected and thrown as one RuleContentError naming file and line, so a broken
 * release is caught at start-up with the whole list rather than one fix at a time.
 */
export function loadBuiltinRules(dir: string = defaultRulesDir()): RuleDefinition[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new RuleContentError([{ file: display(dir), line: 0, message: 'rule directory not found' }]);
  }
  const issues: RuleIssue[] = [];
  const rules: RuleDefinition[] = [];
  const seen = new Map<string, RuleDefinition['source']>();
  for (const path of yamlFiles(dir)) {
    for (const rule of loadFile(path, issues)) {
      const first = seen.get(rule.id);
      if (first) {
        issues.push({
          ...rule.source,
          rule: rule.id,
          message: `duplicate rule id (first defined at ${first.file}:${first.line})`,
        });
        continue;
      }
      seen.set(rule.id, rule.source);
      rules.push(rule);
    }
  }
  if (issues.length > 0) throw new RuleContentError(issues);
  return rules;
}

function yamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...yamlFiles(path));
    else if (entry.isFile() && entry.name.endsWith('.yaml')) out.push(path);
  }
  return out;
}

/** Project-relative (with `/`) when inside the project, so messages read `content/rules/aws/s3.yaml:42`. */
function display(path: string): string {
  const rel = relative(projectRoot, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return path;
  return rel.split(sep).join('/');
}

function loadFile(path: string, issues: RuleIssue[]): RuleDefinition[] {
  const lines = new LineCounter();
  const at: RuleFile = { file: display(path), lines };
  const doc = parseDocument(readFileSync(path, 'utf8'), { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    for (const error of doc.errors) {
      const line = error.linePos?.[0].line ?? lines.linePos(error.pos[0]).line;
      issues.push({ file: at.file, line, message: `invalid YAML: ${error.message.split('\n')[0]}` });
    }
    return [];
  }
  const root = doc.contents as Node | null;
  if (!isMap(root)) {
    issues.push({ file: at.file, line: 1, message: 'a rule file must be a mapping with service and rules' });
    return [];
  }
  const fail = (node: Node | null | undefined, message: string) => issues.push({ file: at.file, line: lines.linePos(node?.range?.[0] ?? 0).line, message });

  let service: Node | undefined;
  let rulesNode: Node | undefined;
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    if (key === 'service') service = pair.value as Node;
    else if (key === 'rules') rulesNode = pair.value as Node;
    else fail(pair.key as Node, `unknown top-level field "${String(key)}" (expected service and rules)`);
  }
  if (!isScalar(service) || typeof service.value !== 'string' || !SERVICE.test(service.value)) {
    fail(service ?? root, 'service must be a lower-case name such as s3');
  }
  if (!isSeq(rulesNode) || rulesNode.items.length === 0) {
    fail(rulesNode ?? root, 'rules must be a non-empty list');
    return [];
  }
  const out: RuleDefinition[] = [];
  for (const item of rulesNode.items as Node[]) {
    const rule = readRule(at, item, issues);
    if (rule) out.push(rule);
  }
  return out;
}
