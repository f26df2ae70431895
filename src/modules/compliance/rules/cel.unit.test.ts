import { describe, expect, it } from 'vitest';
import { loadRuleFixtures, nodeFromFixture } from '../../../../test/fixtures/rules/fixtures.js';
import { compileCondition, ConditionCompileError, evaluateCondition, type ConditionResource } from './cel.js';
import { loadBuiltinRules } from './content-loader.js';

const resource = (properties: Record<string, unknown>, tags: Record<string, unknown> = {}): ConditionResource => ({
  id: 'aws:eu-west-1:aws.s3.bucket:b',
  type: 'aws.s3.bucket',
  name: 'b',
  region: 'eu-west-1',
  account_id: '123456789012',
  properties,
  tags,
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
    console.log(
      `rule evaluation rate: ${rate.toLocaleString('en')} evaluations/s (${rules.length} rules, ${inventory.length} resources, ${evaluations / passes} evaluations per pass, ${passes} passes)`,
    );
    // A floor far below what the machine does, so the test guards against regressions (say, recompiling per call) without flaking.
    expect(rate).toBeGreaterThan(20_000);
  });
});

describe('matches() is RE2 (CEL regex dialect, linear time)', () => {
  const named = (name: string): ConditionResource => ({ ...resource({}), name });

  it('the catastrophic backtracking pattern over 32 a and a ! answers at once (JavaScript RegExp: 20 s)', () => {
    const rule = compileCondition("resource.name.matches('^(a+)+$')");
    const started = performance.now();
    expect(evaluateCondition(rule, named(`${'a'.repeat(32)}!`))).toEqual({ violated: false });
    expect(evaluateCondition(rule, named('a'.repeat(32)))).toEqual({ violated: true });
    // RE2 takes microseconds; backtracking takes 20 s here, and twice that per extra a.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('follows RE2 syntax where it differs from JavaScript, and matches any part of the text', () => {
    // \z is RE2's end of text; JavaScript reads it as a plain z.
    expect(evaluateCondition(compileCondition("resource.name.matches('b\\\\z')"), named('ab'))).toEqual({ violated: true });
    expect(evaluateCondition(compileCondition("resource.name.matches('(?i)PROD')"), named('my-prod-db'))).toEqual({ violated: true });
    expect(evaluateCondition(compileCondition("resource.name.matches('^prod')"), named('my-prod-db'))).toEqual({ violated: false });
  });

  it('refuses at compile time a literal pattern RE2 cannot express, naming it and where it is', () => {
    for (const [pattern, reason] of [
      ['(a)\\\\1', 'invalid escape sequence'],
      ['(?=a)b', 'invalid or unsupported Perl syntax'],
      ['(?!a)b', 'invalid or unsupported Perl syntax'],
      ['a++', 'invalid nested repetition operator'],
    ] as const) {
      const condition = `resource.name.matches('${pattern}')`;
      let error: ConditionCompileError | null = null;
      try {
        compileCondition(condition);
      } catch (e) {
        error = e as ConditionCompileError;
      }
      expect(error, condition).toBeInstanceOf(ConditionCompileError);
      expect(error!.summary).toMatch(/^matches\(\) pattern ".*" is not valid RE2, CEL's regular-expression syntax \(no backreferences, no lookaround\): /);
      expect(error!.summary).toContain(reason);
      expect(error!.range!.start).toBe(condition.indexOf("'"));
    }
  });

  it('a pattern known only at evaluation that RE2 cannot express is an evaluation error', () => {
    const rule = compileCondition('resource.name.matches(resource.tags.pattern)');
    expect(evaluateCondition(rule, { ...named('aa'), tags: { pattern: '(a)\\1' } })).toEqual({ error: expect.stringMatching(/is not valid RE2.*invalid escape sequence/) });
    expect(evaluateCondition(rule, { ...named('aa'), tags: { pattern: '^a+$' } })).toEqual({ violated: true });
    expect(evaluateCondition(rule, { ...named('aa'), tags: { pattern: 3 } })).toEqual({ error: expect.stringMatching(/no matching overload/) });
  });
});

describe('the evaluation budget', () => {
  const items = Array.from({ length: 300 }, (_, i) => i);
  const nested = 'resource.properties.l.exists(x, resource.properties.l.exists(y, resource.properties.l.exists(z, x + y + z < 0)))';

  it('stops nested comprehensions over a 300-item list at the budget (27 million steps, 3.9 s unbounded)', () => {
    const started = performance.now();
    expect(evaluateCondition(compileCondition(nested), resource({ l: items }), 50)).toEqual({ error: 'exceeded the evaluation budget of 50 ms', budget: true });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('an evaluation past its budget is an error even where CEL would absorb the error (|| true, exists)', () => {
    const absorbed = [`${nested} || true`, `[1, 2].exists(i, i == 2 || ${nested})`, `resource.properties.l.exists(i, ${nested}) || resource.name == 'b'`];
    for (const condition of absorbed) {
      expect(evaluateCondition(compileCondition(condition), resource({ l: items }), 30), condition).toMatchObject({ budget: true });
    }
  });

  it('a budget that is not reached changes nothing, and the next evaluation starts afresh', () => {
    const small = compileCondition('resource.properties.l.exists(x, x == 299)');
    expect(evaluateCondition(compileCondition(nested), resource({ l: items }), 20)).toMatchObject({ budget: true });
    expect(evaluateCondition(small, resource({ l: items }), 1000)).toEqual({ violated: true });
    expect(evaluateCondition(small, resource({ l: items }))).toEqual({ violated: true });
    expect(
      evaluateCondition(compileCondition("resource.properties.l.map(x, x * 2.0).filter(x, x > 590.0).size() == 4 && resource.name.matches('^b$')"), resource({ l: items }), 1000),
    ).toEqual({ violated: true });
  });
});

describe('the evaluation budget against values that outgrow their input', () => {
  it('a list doubled at every level of cel.bind stops at the budget instead of exhausting the heap', () => {
    let expression = 'resource.properties.l';
    for (let i = 0; i < 24; i++) expression = `cel.bind(a${i}, ${expression}, a${i} + a${i})`;
    const started = performance.now();
    const outcome = evaluateCondition(compileCondition(`size(${expression}) > 0`), resource({ l: Array.from({ length: 300 }, (_, i) => i) }), 50);
    expect(outcome).toEqual({ error: 'exceeded the evaluation budget of 50 ms', budget: true });
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
