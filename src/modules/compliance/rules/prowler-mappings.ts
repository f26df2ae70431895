import { frameworks } from '../frameworks.js';
import { PROWLER_FRAMEWORKS, type FrameworkMapping } from './rule-types.js';

/**
 * The crosswalk of the frameworks carried as Prowler ships them (content/frameworks/README.md): a
 * requirement lists the Prowler checks that assess it, and a built-in rule counts toward every
 * requirement that lists one of the checks it reproduces (its `prowler_checks`). The mappings of the
 * four core frameworks are written in the rule files instead (content/frameworks/crosswalk.json).
 *
 * In registry order, then catalog order, so a rule lists them the same way every time.
 */
export function prowlerFrameworkMappings(checks: readonly string[]): FrameworkMapping[] {
  if (checks.length === 0) return [];
  const wanted = new Set(checks);
  const out: FrameworkMapping[] = [];
  for (const framework of PROWLER_FRAMEWORKS) {
    for (const control of frameworks().get(framework)!.controls.values()) {
      if (control.checks?.some((check) => wanted.has(check))) out.push({ framework, control_id: control.id });
    }
  }
  return out;
}
