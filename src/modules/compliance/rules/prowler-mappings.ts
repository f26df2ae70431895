import { frameworks } from '../frameworks.js';
import { PROWLER_FRAMEWORKS, type FrameworkMapping } from './rule-types.js';

/**
 * The crosswalk of the frameworks carried as Prowler ships them (content/frameworks/README.md): a
 * requirement lists the Prowler checks that assess it, and a built-in rule counts toward every
 * requirement that lists one of the checks it reproduces (its `prowler_checks`). The mappings of the
 * four core frameworks are written in the rule files instead (content/frameworks/crosswalk.json).
 */

let index: Map<string, FrameworkMapping[]> | null = null;

/** Prowler check id → the requirements of the Prowler-carried catalogs that list it, in catalog order. */
export function requirementsByCheck(): Map<string, FrameworkMapping[]> {
  if (!index) {
    index = new Map();
    for (const framework of PROWLER_FRAMEWORKS) {
      for (const control of frameworks().get(framework)!.controls.values()) {
        for (const check of control.checks ?? []) {
          const list = index.get(check) ?? [];
          list.push({ framework, control_id: control.id });
          index.set(check, list);
        }
      }
    }
  }
  return index;
}

/** The requirements of the Prowler-carried frameworks a rule reproducing these checks counts toward (no duplicates). */
export function prowlerFrameworkMappings(checks: readonly string[]): FrameworkMapping[] {
  const seen = new Set<string>();
  const out: FrameworkMapping[] = [];
  for (const check of checks) {
    for (const m of requirementsByCheck().get(check) ?? []) {
      const key = `${m.framework}\u0000${m.control_id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(m);
    }
  }
  // Framework by framework, in the registry's order, so a rule lists them the same way every time.
  const order = new Map<string, number>(PROWLER_FRAMEWORKS.map((f, i) => [f, i]));
  return out.sort((a, b) => order.get(a.framework)! - order.get(b.framework)!);
}
