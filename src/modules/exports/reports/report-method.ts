import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import type { ControlStatusEntry } from '../../compliance/index.js';
import { lastSucceededAudit, ruleControls, suspensionReasons, unknownsByRule, unknownTotals, type Rule } from '../../compliance/index.js';
import type { FrameworkId } from '../../compliance/index.js';
import type { ResourceFilter } from '../../compliance/index.js';
import { hostReportSpan, hostRules } from '../../agents/index.js';
import { nodesInWorkspace } from '../../graph/index.js';

/**
 * The method section of a report: what was evaluated (resources, hosts), when (the last audit run,
 * the last agent reports), by which rules, what could not be evaluated (unknown outcomes, suspended
 * rules, controls only an attestation can settle), and the definitions every number rests on.
 */
export interface ReportMethod {
  resources: { total: number; by_type: Array<{ type: string; count: number }> };
  hosts: { count: number; first_report_at: string | null; last_report_at: string | null };
  last_audit: {
    id: string;
    started_at: string | null;
    finished_at: string | null;
    resources_evaluated: number | null;
    rules_evaluated: number | null;
    evaluations: number | null;
  } | null;
  rules: {
    builtin: number;
    host: number;
    custom: number;
    /** Every rule whose outcome counts for a selected framework, with those controls. */
    list: Array<{ id: string; title: string; source: 'built-in' | 'host' | 'custom'; severity: string; controls: string[] }>;
  };
  not_evaluated: {
    unknown_controls: number;
    unknown_evaluations: number;
    unknown_resources: number;
    /** Unknown evaluations by rule and reason, with the configuration paths the resources lacked. */
    by_rule: Array<{ rule_id: string; reason: string; resources: number; missing_paths: string[] }>;
    suspended_rules: Array<{ rule_id: string; reason: string | null }>;
    not_attested_controls: number;
  };
  definitions: Record<'active_finding' | 'failing' | 'unknown' | 'passing' | 'not_attested' | 'score', string>;
}

export const DEFINITIONS: ReportMethod['definitions'] = {
  active_finding: 'An open finding not covered by a current risk acceptance.',
  failing: "A control is failing while an active finding maps to it (the rule's primary control and its counted mappings).",
  unknown:
    'A control is unknown while no active finding maps to it and a rule could not judge at least one resource for it (configuration missing, evaluation error, data not collected); an unknown control does not pass.',
  passing: 'A control passes while a rule checks it or a current attestation covers it, and it is neither failing nor unknown.',
  not_attested: 'A control that no rule checks and no current attestation covers (a questionnaire maps it): only an attestation can make it pass.',
  score:
    'Score = passing controls / applicable controls × 100; applicable controls are those of every evaluated rule (AWS, host and custom), of questionnaires, and of any active finding or unknown evaluation. Failing, unknown and not attested controls all lower it.',
};

const iso = (value: Date | string | null | undefined) => (value ? new Date(value).toISOString() : null);

/** How many missing paths a rule row of "could not be evaluated" names at most. */
const PATHS_SHOWN = 6;

export async function collectMethod(
  db: Kysely<Database>,
  scope: Scope,
  input: { selected: FrameworkId[]; rules: Rule[]; controls: ControlStatusEntry[]; resources?: ResourceFilter; now: Date },
): Promise<ReportMethod> {
  const { selected, resources } = input;
  const nodeFilter = (column: string): RawBuilder<boolean> => (resources ? resources(sql.ref<string>(column)) : sql<boolean>`true`);
  // Unknowns that count for the selection (one framework, or all), as for a finding (finding-counts.ts).
  const unknowns = { framework: selected.length === 1 ? selected[0]! : null, resources };

  const [types, hosts, lastAudit, unknownTotal, unknownByRule, suspended] = await Promise.all([
    sql<{ type: string; count: number }>`
      SELECT n.type, count(*)::int AS count FROM ${nodesInWorkspace(scope)} n
      WHERE ${nodeFilter('n.id')}
      GROUP BY n.type ORDER BY count(*) DESC, n.type`.execute(db),
    hostReportSpan(db, scope, (nodeId) => (resources ? resources(nodeId) : sql<boolean>`true`)),
    lastSucceededAudit(db, scope),
    unknownTotals(db, scope, unknowns),
    unknownsByRule(db, scope, unknowns),
    suspensionReasons(db, scope.tenantId),
  ]);

  const selectedSet = new Set<string>(selected);
  const controlsIn = (rule: Pick<Rule, 'framework' | 'control_id' | 'framework_mappings'>) =>
    ruleControls(rule)
      .filter((m) => selectedSet.has(m.framework))
      .map((m) => (selected.length === 1 ? m.control_id : `${m.framework} ${m.control_id}`));
  const list: ReportMethod['rules']['list'] = [];
  for (const rule of input.rules) {
    const controls = controlsIn(rule);
    if (controls.length) list.push({ id: rule.id, title: rule.title, source: rule.builtin ? 'built-in' : 'custom', severity: rule.severity, controls });
  }
  for (const rule of hostRules().all) {
    const controls = controlsIn(rule);
    if (controls.length) list.push({ id: rule.id, title: rule.title, source: 'host', severity: rule.severity, controls });
  }
  const stats = (lastAudit?.stats ?? {}) as Record<string, unknown>;
  const number = (value: unknown) => (typeof value === 'number' ? value : null);
  const listed = new Set(list.map((r) => r.id));

  return {
    resources: { total: types.rows.reduce((n, r) => n + r.count, 0), by_type: types.rows },
    hosts: { count: hosts.count, first_report_at: iso(hosts.first), last_report_at: iso(hosts.last) },
    last_audit: lastAudit
      ? {
          id: lastAudit.id,
          started_at: iso(lastAudit.started_at),
          finished_at: iso(lastAudit.finished_at),
          resources_evaluated: number(stats.resources_evaluated),
          rules_evaluated: number(stats.rules_evaluated),
          evaluations: number(stats.evaluations),
        }
      : null,
    rules: {
      builtin: list.filter((r) => r.source === 'built-in').length,
      host: list.filter((r) => r.source === 'host').length,
      custom: list.filter((r) => r.source === 'custom').length,
      list,
    },
    not_evaluated: {
      unknown_controls: input.controls.filter((c) => c.automated_state === 'unknown').length,
      unknown_evaluations: unknownTotal.evaluations,
      unknown_resources: unknownTotal.resources,
      by_rule: unknownByRule.map((r) => ({
        rule_id: r.rule_id,
        reason: r.reason,
        resources: r.resources,
        missing_paths: (r.missing_paths ?? []).sort().slice(0, PATHS_SHOWN),
      })),
      suspended_rules: suspended.filter((s) => listed.has(s.rule_id)).map((s) => ({ rule_id: s.rule_id, reason: s.suspended_reason })),
      not_attested_controls: input.controls.filter((c) => c.automated_state !== 'failing' && c.automated_state !== 'unknown' && !c.passing).length,
    },
    definitions: DEFINITIONS,
  };
}
