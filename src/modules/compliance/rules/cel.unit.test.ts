import { describe, expect, it } from 'vitest';
import { loadRuleFixtures, nodeFromFixture } from '../../../../test/fixtures/rules/fixtures.js';
import { compileCondition, ConditionCompileError, evaluateCondition, type ConditionResource } from './cel.js';
import { loadBuiltinRules } from './content-loader.js';

const resource = (properties: Record<string, unknown>, tags: Record<string, unknown> = {}): ConditionResource => ({
  id: 'aws:eu-west-1:aws.s3.bucket:b', type: 'aws.s3.bucket', name: 'b', region: 'eu-west-1', account_id: '123456789012', properties, tags,
});

describe('compileCondition', () => {
  it('throws ConditionCompileError with the library message and position', () => {
    const err = (() => {
      try {
        compileCondition('resource.properties.a ==');
      } catch (e) {
        return e as ConditionCompileError;
      }
      throw new Error('expected a compile error');
    })();
    expect(err).toBeInstanceOf(ConditionCompileError);
    expect(err.summary).toBe('Unexpected token: EOF');
    expect(err.range).toEqual({ start: 24, end: 24 });
    expect(err.message).toContain('resource.properties.a ==\n');
    expect(err.message).toMatch(/\^/);
  });

  it('rejects type errors, unknown variables and non-boolean results', () => {
    expect(() => compileCondition('1 + "a" == 2')).toThrow(/no such overload: int \+ string/);
    expect(() => compileCondition('node.properties.a')).toThrow(/Unknown variable: node/);
    expect(() => compileCondition('size(resource.tags)')).toThrow(/must evaluate to bool, not int/);
    expect(() => compileCondition('resource.properties.a')).not.toThrow();
  });
});

describe('evaluateCondition', () => {
  it('reports violated, compliant, and never throws', () => {
    const open = compileCondition('resource.properties.configuration.public == true');
    expect(evaluateCondition(open, resource({ configuration: { public: true } }))).toEqual({ violated: true });
    expect(evaluateCondition(open, resource({ configuration: { public: false } }))).toEqual({ violated: false });
    expect(evaluateCondition(open, resource({}))).toEqual({ error: 'No such key: configuration (at 20)' });
  });

  it('treats a non-boolean result as an error', () => {
    const value = compileCondition('resource.properties.configuration.name');
    expect(evaluateCondition(value, resource({ configuration: { name: 'x' } }))).toEqual({ error: 'condition returned a string, not a bool' });
    expect(evaluateCondition(value, resource({ configuration: { name: null } }))).toEqual({ error: 'condition returned null, not a bool' });
  });

  it('compares JSON numbers with integer literals and reads tags', () => {
    const port = compileCondition('resource.properties.p.fromPort <= 22 && resource.properties.p.toPort >= 22 && resource.tags.env == "prod"');
    expect(evaluateCondition(port, resource({ p: { fromPort: 0, toPort: 65535 } }, { env: 'prod' }))).toEqual({ violated: true });
    expect(evaluateCondition(port, resource({ p: { fromPort: 443, toPort: 443.0 } }, { env: 'prod' }))).toEqual({ violated: false });
  });

  it('uses has() to tell absence from a value, as the rules do', () => {
    const guarded = compileCondition('!has(resource.properties.sc.Encryption) || resource.properties.sc.Encryption.on != true');
    expect(evaluateCondition(guarded, resource({ sc: {} }))).toEqual({ violated: true });
    expect(evaluateCondition(guarded, resource({ sc: { Encryption: { on: true } } }))).toEqual({ violated: false });
  });
});

describe('evaluation rate of the built-in rule set', () => {
  it('evaluates every rule of a type against a few thousand synthetic resources', () => {
    const rules = loadBuiltinRules();
    const fixtures = loadRuleFixtures();
    // Synthetic inventory: every fixture resource of every rule, copied under distinct ids until there are 3,000.
    const byType = new Map<string, Array<{ compiled: ReturnType<typeof compileCondition> }>>();
    for (const rule of rules) {
      const list = byType.get(rule.resource_type) ?? [];
      list.push({ compiled: compileCondition(rule.condition) });
      byType.set(rule.resource_type, list);
    }
    // Seeds are the complete configuration items (violating and compliant); the deliberately incomplete
    // ones of the edge cases are left out because each evaluation error builds an Error with a stack,
    // which is several times the cost of an evaluation and rare in real inventories.
    const seeds: ConditionResource[] = [];
    for (const rule of rules) {
      const f = fixtures.get(rule.id)!;
      for (const item of [f.violating, f.compliant]) seeds.push(nodeFromFixture(rule, item));
    }
    const inventory: ConditionResource[] = [];
    for (let i = 0; inventory.length < 3000; i++) {
      const seed = seeds[i % seeds.length]!;
      inventory.push({ ...seed, id: `${seed.id}-${i}`, properties: structuredClone(seed.properties) });
    }

    const pass = () => {
      let evaluations = 0;
      let findings = 0;
      for (const node of inventory) {
        for (const { compiled } of byType.get(node.type) ?? []) {
          const result = evaluateCondition(compiled, node);
          evaluations++;
          if ('violated' in result && result.violated) findings++;
        }
      }
      return { evaluations, findings };
    };
    expect(pass().findings).toBeGreaterThan(0);
    const started = performance.now();
    let evaluations = 0;
    let passes = 0;
    while (performance.now() - started < 1000 || passes < 3) {
      evaluations += pass().evaluations;
      passes++;
    }
    const seconds = (performance.now() - started) / 1000;
    const rate = Math.round(evaluations / seconds);
    console.log(`rule evaluation rate: ${rate.toLocaleString('en')} evaluations/s (${rules.length} rules, ${inventory.length} resources, ${evaluations / passes} evaluations per pass, ${passes} passes)`);
    // A floor far below what the machine does, so the test guards against regressions (say, recompiling per call) without flaking.
    expect(rate).toBeGreaterThan(20_000);
  });
});
