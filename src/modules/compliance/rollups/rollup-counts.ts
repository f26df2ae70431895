import { SEVERITIES } from '../rules/rule-types.js';
import type { ControlRollupRow } from './active-rollup.js';

/**
 * Counts over rollup rows (active-rollup.ts), with the definitions the queries over findings used:
 * a finding counts for its own control and for every control its text maps to, and for a framework
 * when its own control or one of its mappings is in it.
 */

type Row = Pick<ControlRollupRow, 'framework' | 'control_id' | 'severity_rank' | 'n' | 'framework_mappings'>;

const frameworksOf = (row: Row) => new Set([row.framework, ...row.framework_mappings.map((m) => m.framework)]);

/** Findings and the highest severity rank per (framework, control) — what findingsByControl returns. */
export function countsByControl(rows: Row[]): Array<{ framework: string; control_id: string; findings: number; top: number }> {
  const out = new Map<string, { framework: string; control_id: string; findings: number; top: number }>();
  for (const row of rows) {
    const controls = new Map([[`${row.framework}\u0000${row.control_id}`, [row.framework, row.control_id] as const]]);
    for (const m of row.framework_mappings) controls.set(`${m.framework}\u0000${m.control_id}`, [m.framework, m.control_id]);
    for (const [key, [framework, control_id]] of controls) {
      const entry = out.get(key) ?? { framework, control_id, findings: 0, top: 0 };
      entry.findings += row.n;
      entry.top = Math.max(entry.top, row.severity_rank);
      out.set(key, entry);
    }
  }
  return [...out.values()];
}

/** Findings per severity (every severity, 0 when none) and their total; of one framework when given. */
export function countsBySeverity(rows: Row[], framework?: string | null): { bySeverity: Record<string, number>; total: number } {
  const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<string, number>;
  let total = 0;
  for (const row of rows) {
    if (framework && !frameworksOf(row).has(framework)) continue;
    bySeverity[SEVERITIES[5 - row.severity_rank]!]! += row.n;
    total += row.n;
  }
  return { bySeverity, total };
}

/** Findings per framework they count for. */
export function countsByFramework(rows: Row[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const row of rows) for (const framework of frameworksOf(row)) out.set(framework, (out.get(framework) ?? 0) + row.n);
  return out;
}
