import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../platform/paths.js';
import { loadBuiltinRules } from './content-loader.js';
import { FRAMEWORKS, type FrameworkId } from './rule-types.js';

/**
 * Control ids of built-in rules exist in the shipped framework catalogs, and every mapping is grounded
 * in the Prowler crosswalk: a rule maps to a requirement only when that requirement lists one of the
 * rule's Prowler checks, and it lists all such requirements.
 */

const rules = loadBuiltinRules();
const catalogPath = (fw: FrameworkId) => projectPath('content', 'frameworks', `${fw}.json`);
const crosswalkPath = projectPath('content', 'frameworks', 'crosswalk.json');
const missingCatalogs = FRAMEWORKS.filter((fw) => !existsSync(catalogPath(fw)));

describe('framework control ids', () => {
  it.skipIf(missingCatalogs.length > 0)(
    `exist in content/frameworks/<framework>.json${missingCatalogs.length ? ` (skipped: ${missingCatalogs.join(', ')} not written yet)` : ''}`,
    () => {
      const ids = new Map(FRAMEWORKS.map((fw) => {
        const catalog = JSON.parse(readFileSync(catalogPath(fw), 'utf8')) as { controls: Array<{ id: string }> };
        return [fw, new Set(catalog.controls.map((c) => c.id))] as const;
      }));
      const unknown: string[] = [];
      for (const rule of rules) {
        for (const m of [{ framework: rule.framework, control_id: rule.control_id }, ...rule.framework_mappings]) {
          if (!ids.get(m.framework)!.has(m.control_id)) unknown.push(`${rule.id}: ${m.framework} ${m.control_id}`);
        }
      }
      expect(unknown).toEqual([]);
    },
  );
});

describe('framework mappings', () => {
  it.skipIf(!existsSync(crosswalkPath))(
    `are exactly the crosswalk's requirements for the rule's Prowler checks${existsSync(crosswalkPath) ? '' : ' (skipped: crosswalk.json not written yet)'}`,
    () => {
      const crosswalk = (JSON.parse(readFileSync(crosswalkPath, 'utf8')) as { checks: Record<string, Partial<Record<FrameworkId, string[]>>> }).checks;
      for (const rule of rules) {
        expect(rule.prowler_checks?.length, `${rule.id} names its Prowler checks`).toBeGreaterThan(0);
        const expected = new Set<string>();
        for (const check of rule.prowler_checks!) {
          for (const fw of FRAMEWORKS) for (const id of crosswalk[check]?.[fw] ?? []) expected.add(`${fw} ${id}`);
        }
        const actual = [`${rule.framework} ${rule.control_id}`, ...rule.framework_mappings.map((m) => `${m.framework} ${m.control_id}`)];
        expect(new Set(actual), rule.id).toEqual(expected);
        expect(actual.length, `${rule.id} lists no control twice`).toBe(expected.size);
      }
    },
  );
});
