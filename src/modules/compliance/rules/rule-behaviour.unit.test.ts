import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, leafPaths, loadRuleFixtures, nodeFromFixture, serviceOf, type FixtureResource } from '../../../../test/fixtures/rules/fixtures.js';
import { compileCondition } from './cel.js';
import { loadBuiltinRules } from './content-loader.js';
import { missingJudgementOf } from './missing-paths.js';
import { judge, type Judgement } from '../audit/judge.js';
import { propertyModel } from './property-paths.js';
import type { RuleDefinition } from './rule-types.js';

/**
 * Every built-in rule against its fixtures (test/fixtures/rules/<service>.json): a violating and a
 * compliant configuration item, and named cases for missing blocks and exceptions, each with the
 * outcome the rule intends, as the audit judges it (judge.ts: a resource lacking a path the rule
 * requires gets the rule's when_missing; `unknown` means the engine records an unknown evaluation,
 * neither a finding nor a pass).
 */

const rules = loadBuiltinRules();
const fixtures = loadRuleFixtures();
const schema = propertyModel();

const outcome = (result: Judgement) => (result.outcome === 'passed' ? 'compliant' : result.outcome);

function run(rule: RuleDefinition) {
  const compiled = compileCondition(rule.condition);
  const missing = missingJudgementOf(rule);
  return (resource: FixtureResource) => outcome(judge(compiled, missing, nodeFromFixture(rule, resource), Infinity));
}

describe('rule fixtures', () => {
  it('exist for every rule, in the file of its service, and for no unknown rule', () => {
    expect(rules.filter((r) => !fixtures.has(r.id)).map((r) => r.id)).toEqual([]);
    const ids = new Set(rules.map((r) => r.id));
    expect([...fixtures.keys()].filter((id) => !ids.has(id))).toEqual([]);
    for (const rule of rules) {
      const file = join(fixturesDir(), `${serviceOf(rule)}.json`);
      expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')) as object), file).toContain(rule.id);
    }
  });

  it("are shaped like AWS Config configuration items of the rule's type", () => {
    for (const rule of rules) {
      const fixture = fixtures.get(rule.id)!;
      const items = [fixture.violating, fixture.compliant, ...(fixture.cases ?? []).map((c) => c.resource)];
      for (const item of items) {
        expect(item.properties.resourceType, rule.id).toBe(rule.config_resource_type);
        const unknown = [...leafPaths(item.properties)].filter((p) => !schema.hasPath(rule.config_resource_type!, p));
        expect(unknown, `${rule.id}: fixture paths outside the ${rule.config_resource_type} schema`).toEqual([]);
      }
    }
  });
});

describe.each(rules.map((r) => [r.id, r] as const))('%s', (id, rule) => {
  const fixture = fixtures.get(id)!;

  it('flags the violating resource and passes the compliant one', () => {
    const evaluate = run(rule);
    expect(evaluate(fixture.violating)).toBe('violated');
    expect(evaluate(fixture.compliant)).toBe('compliant');
  });

  const cases = fixture?.cases ?? [];
  it.runIf(cases.length > 0).each(cases.map((c) => [c.name, c] as const))('case: %s', (_name, c) => {
    // An evaluation error is an unknown outcome (fixtures written before outcomes had a name say `error`).
    expect(run(rule)(c.resource)).toBe(c.expect === 'error' ? 'unknown' : c.expect);
  });
});
