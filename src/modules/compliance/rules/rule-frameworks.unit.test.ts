import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../platform/paths.js';
import { loadBuiltinRules } from './content-loader.js';
import { CORE_FRAMEWORKS as FRAMEWORKS, type FrameworkId } from './rule-types.js';

/**
 * Control ids of built-in rules exist in the shipped framework catalogs, and every mapping is grounded
 * in the Prowler crosswalk: a rule maps to a requirement only when that requirement lists one of the
 * rule's Prowler checks, and it lists all such requirements. A rule no framework file cites a check of
 * has its cited primary NIST control and nothing else. These are the four core frameworks whose
 * mappings the rule files carry; the Prowler-carried ones are derived at load (prowler-mappings.ts).
 */

const rules = loadBuiltinRules();
const catalogPath = (fw: FrameworkId) => projectPath('content', 'frameworks', `${fw}.json`);
const crosswalkPath = projectPath('content', 'frameworks', 'crosswalk.json');
const missingCatalogs = FRAMEWORKS.filter((fw) => !existsSync(catalogPath(fw)));

describe('framework control ids', () => {
  it.skipIf(missingCatalogs.length > 0)(
    `exist in content/frameworks/<framework>.json${missingCatalogs.length ? ` (skipped: ${missingCatalogs.join(', ')} not written yet)` : ''}`,
    () => {
      const ids = new Map<string, Set<string>>(
        FRAMEWORKS.map((fw) => {
          const catalog = JSON.parse(readFileSync(catalogPath(fw), 'utf8')) as { controls: Array<{ id: string }> };
          return [fw, new Set(catalog.controls.map((c) => c.id))] as const;
        }),
      );
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
        const expected = new Set<string>();
        for (const check of rule.prowler_checks ?? []) {
          for (const fw of FRAMEWORKS) for (const id of crosswalk[check]?.[fw] ?? []) expected.add(`${fw} ${id}`);
        }
        if (expected.size === 0) {
          // A rule that reproduces no Prowler check any framework file cites (content/rules/README.md,
          // "Framework mappings"): its one control is its primary NIST control, cited from another
          // public mapping in nist_controls (test/content/rule-texts.unit.test.ts checks the citation).
          expect(rule.framework, `${rule.id} has no Prowler mapping: its primary framework is NIST`).toBe('nist-800-53');
          expect(
            rule.nist_controls?.some((c) => c.control_id === rule.control_id && c.source !== 'prowler'),
            `${rule.id} cites its primary control`,
          ).toBe(true);
          expect(rule.framework_mappings, rule.id).toEqual([]);
          continue;
        }
        const actual = [`${rule.framework} ${rule.control_id}`, ...rule.framework_mappings.map((m) => `${m.framework} ${m.control_id}`)];
        expect(new Set(actual), rule.id).toEqual(expected);
        expect(actual.length, `${rule.id} lists no control twice`).toBe(expected.size);
      }
    },
  );
});
