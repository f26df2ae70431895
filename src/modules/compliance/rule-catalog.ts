import { inTenant } from '../../platform/db/scope.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import { loadBuiltinRules } from './rules/content-loader.js';
import { compileCondition, type CompiledCondition } from './rules/cel.js';
import type { FrameworkMapping, GroupBy, Remediation, RuleDefinition, Severity } from './rules/rule-types.js';
import { splitMappings } from './rules/primary-controls.js';
import { prowlerFrameworkMappings } from './rules/prowler-mappings.js';
import './tables.js';

/** A rule as the engine and the API see it: built-in (from content) or custom (per tenant). */
export interface Rule {
  id: string;
  /** The check's title (the desired state): rule listings. */
  title: string;
  description: string;
  /** The failure wording every finding of the rule carries (findings, POA&M, reports, webhooks, stream, e-mail). */
  finding_title: string;
  finding_description: string;
  severity: Severity;
  resource_type: string;
  framework: string;
  control_id: string;
  /** The mapped controls the rule's failure fails besides its own (rules/primary-controls.ts). */
  framework_mappings: FrameworkMapping[];
  /** Mapped NIST controls that are not primary: shown for reference, never failing. */
  related_mappings: FrameworkMapping[];
  condition: string;
  remediation: Remediation;
  /** The root cause of a violation, for finding groups; null: group by account and region. */
  group_by: GroupBy | null;
  builtin: boolean;
  definition: RuleDefinition | null;
  /** A custom rule's timestamps (built-in rules have none). */
  created_at?: Date;
  updated_at?: Date;
}

let builtins: Rule[] | null = null;

/** Built-in rules, loaded and compiled once per process; a bad rule file stops the start. */
export function builtinRules(): Rule[] {
  builtins ??= loadBuiltinRules().map((d) => {
    const { counted, related } = splitMappings(d);
    return {
      id: d.id,
      title: d.title,
      description: d.description,
      finding_title: d.finding_title,
      finding_description: d.finding_description,
      severity: d.severity,
      resource_type: d.resource_type,
      framework: d.framework,
      control_id: d.control_id,
      // The Prowler-carried frameworks' requirements come from the checks the rule reproduces.
      framework_mappings: [...counted, ...prowlerFrameworkMappings(d.prowler_checks ?? [])],
      related_mappings: related,
      condition: d.condition,
      remediation: d.remediation,
      group_by: d.group_by ?? null,
      builtin: true as const,
      definition: d,
    };
  });
  return builtins;
}

/** The failure wording of a rule that has none of its own (a custom rule created without one). */
export function generatedFindingTitle(title: string): string {
  return `Fails: ${title}`;
}

export function generatedFindingDescription(title: string, description: string): string {
  return `The resource fails the rule "${title}". ${description}`;
}

export function builtinRule(id: string): Rule | undefined {
  return builtinRules().find((r) => r.id === id);
}

export async function customRules(db: Kysely<Database>, tenantId: string): Promise<Rule[]> {
  const rows = await db.selectFrom('custom_rules').selectAll().where(inTenant(tenantId)).orderBy('id').execute();
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    description: r.description,
    finding_title: r.finding_title ?? generatedFindingTitle(r.title),
    finding_description: r.finding_description ?? generatedFindingDescription(r.title, r.description),
    severity: r.severity,
    resource_type: r.resource_type,
    framework: r.framework,
    control_id: r.control_id,
    framework_mappings: r.framework_mappings,
    related_mappings: [],
    condition: r.condition,
    remediation: r.remediation,
    group_by: r.group_by,
    builtin: false,
    definition: null,
    created_at: new Date(r.created_at),
    updated_at: new Date(r.updated_at),
  }));
}

/** Every rule of the tenant: built-in first, then custom. */
export async function allRules(db: Kysely<Database>, tenantId: string): Promise<Rule[]> {
  return [...builtinRules(), ...(await customRules(db, tenantId))];
}

/** True when the rule's failure affects the framework (its own or a mapped control). */
export function ruleTouches(rule: Rule, framework: string): boolean {
  return rule.framework === framework || rule.framework_mappings.some((m) => m.framework === framework);
}

/**
 * Every (framework, control) the rule's failure fails: its primary control and its counted mappings
 * (rules/primary-controls.ts). The one definition of "failing" for control states, scores, gaps,
 * reports and POA&M items; related NIST mappings are not in it.
 */
export function ruleControls(rule: Pick<Rule, 'framework' | 'control_id' | 'framework_mappings'>): FrameworkMapping[] {
  const seen = new Set<string>();
  const out: FrameworkMapping[] = [];
  for (const m of [{ framework: rule.framework, control_id: rule.control_id } as FrameworkMapping, ...rule.framework_mappings]) {
    const key = `${m.framework}\u0000${m.control_id}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(m);
    }
  }
  return out;
}

const compiled = new Map<string, CompiledCondition>();

/** Compiled conditions are cached by expression text: custom rules recompile only when edited. */
export function compiledCondition(rule: Rule): CompiledCondition {
  let c = compiled.get(rule.condition);
  if (!c) {
    c = compileCondition(rule.condition);
    if (compiled.size > 5000) compiled.clear();
    compiled.set(rule.condition, c);
  }
  return c;
}
