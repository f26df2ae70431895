import { afterEach, describe, expect, it } from 'vitest';
import type { Rule } from '../rule-catalog.js';
import type { AuditNode } from './evaluate.js';
import { RuleEvaluator } from './rule-evaluator.js';

// The evaluator runs the real evaluation thread (evaluation-thread.ts, loaded from source).

const rule = (id: string, condition: string, resource_type = 'aws.s3.bucket'): Rule => ({
  id,
  title: id,
  description: '',
  finding_title: `Fails: ${id}`,
  finding_description: '',
  related_mappings: [],
  severity: 'LOW',
  resource_type,
  framework: 'soc2',
  control_id: 'CC6.1',
  framework_mappings: [],
  condition,
  remediation: { summary: '', steps: [] },
  group_by: null,
  builtin: false,
  definition: null,
});

const node = (id: string, properties: Record<string, unknown> = {}, type = 'aws.s3.bucket'): AuditNode => ({
  id,
  type,
  native_id: id,
  name: id,
  region: 'eu-west-1',
  account_id: '123456789012',
  properties,
  tags: {},
});

const items = Array.from({ length: 300 }, (_, i) => i);
const NESTED = 'resource.properties.l.exists(x, resource.properties.l.exists(y, resource.properties.l.exists(z, x + y + z < 0)))';

let open: RuleEvaluator | null = null;
afterEach(() => {
  open?.close();
  open = null;
});

describe('RuleEvaluator', () => {
  it('evaluates every rule of a node type in the thread: violations, passes and errors', async () => {
    const evaluator = (open = await RuleEvaluator.open(
      [rule('named-public', "resource.name.contains('public')"), rule('has-x', 'resource.properties.x == 1'), rule('other', 'true', 'aws.ec2.instance')],
      { budgetMs: 100 },
    ));
    const batch = await evaluator.evaluate([node('public-1', { x: 1 }), node('private-2', {}), node('i-1', {}, 'aws.ec2.instance')]);
    expect([...batch.violations.keys()].sort()).toEqual(['has-x:public-1', 'named-public:public-1', 'other:i-1']);
    expect([...batch.passes].sort()).toEqual(['named-public:private-2']);
    expect(batch).toMatchObject({ evaluations: 5, errors: 1 });
    // The error is an unknown outcome of that (rule, resource), never a pass.
    expect([...batch.unknowns.entries()].map(([id, u]) => [id, u.reason, u.detail])).toEqual([['has-x:private-2', 'evaluation_error', 'No such key: x (at 20)']]);
    expect(evaluator.report().find((r) => r.rule_id === 'has-x')).toEqual({
      rule_id: 'has-x',
      evaluations: 2,
      errors: 1,
      budget_exceeded: 0,
      unknown: 1,
      missing_configuration: { violations: 0, passes: 0, unknown: 0 },
      missing_paths: [],
      stopped: null,
      error: { resource_id: 'private-2', message: 'No such key: x (at 20)' },
    });
  });

  it('a rule over its budget is an error on that resource; after 3 it is not evaluated for the rest of the run, in later batches too', async () => {
    const evaluator = (open = await RuleEvaluator.open([rule('nested', NESTED), rule('cheap', "resource.name.startsWith('n')")], { budgetMs: 20 }));
    const nodes = Array.from({ length: 5 }, (_, i) => node(`n${i}`, { l: items }));
    const started = performance.now();
    const first = await evaluator.evaluate(nodes);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(first.violations.size).toBe(5);
    expect(first).toMatchObject({ evaluations: 10, errors: 5 });
    const second = await evaluator.evaluate([node('n5', { l: items })]);
    expect(second).toMatchObject({ evaluations: 2, errors: 1 });
    expect([...second.violations.keys()]).toEqual(['cheap:n5']);
    expect(evaluator.report()[0]).toEqual({
      rule_id: 'nested',
      evaluations: 6,
      errors: 6,
      budget_exceeded: 3,
      unknown: 6,
      missing_configuration: { violations: 0, passes: 0, unknown: 0 },
      missing_paths: [],
      stopped: 'not evaluated: the rule exceeded its evaluation budget of 20 ms on 3 resources in this run',
      error: { resource_id: 'n0', message: 'exceeded the evaluation budget of 20 ms' },
    });
    expect(evaluator.report()[1]).toMatchObject({ errors: 0, stopped: null });
    // The resources the stopped rule was not evaluated on are unknown, not passed.
    expect(second.unknowns.get('nested:n5')).toMatchObject({ reason: 'budget_exceeded', detail: expect.stringContaining('not evaluated') });
  });

  it("judges a resource lacking a required path by the rule's when_missing, before its condition runs", async () => {
    const declared = (id: string, when_missing: 'violation' | 'pass' | 'unknown'): Rule => ({
      ...rule(id, 'resource.properties.configuration.flag != true'),
      definition: { reads: ['configuration.flag'], when_missing } as Rule['definition'],
    });
    const evaluator = (open = await RuleEvaluator.open([declared('v', 'violation'), declared('p', 'pass'), declared('u', 'unknown')], { budgetMs: 100 }));
    const batch = await evaluator.evaluate([node('bare', { configuration: { name: 'bare' } }), node('set', { configuration: { flag: true } })]);
    expect([...batch.violations.keys()]).toEqual(['v:bare']);
    expect([...batch.passes].sort()).toEqual(['p:bare', 'p:set', 'u:set', 'v:set']);
    expect([...batch.unknowns.values()].map((u) => [u.rule.id, u.node.id, u.reason, u.missing])).toEqual([['u', 'bare', 'missing_configuration', ['configuration.flag']]]);
    expect(batch).toMatchObject({ evaluations: 6, errors: 0 });
    expect(evaluator.report().map((r) => [r.rule_id, r.missing_configuration, r.missing_paths])).toEqual([
      ['v', { violations: 1, passes: 0, unknown: 0 }, ['configuration.flag']],
      ['p', { violations: 0, passes: 1, unknown: 0 }, ['configuration.flag']],
      ['u', { violations: 0, passes: 0, unknown: 1 }, ['configuration.flag']],
    ]);
  });

  it('an evaluation that never reaches a budget check is ended by the watchdog, charged to its rule, and the batch goes on in a new thread', async () => {
    // A budget the evaluation never reaches, a watchdog far shorter: only the watchdog can end it.
    const evaluator = (open = await RuleEvaluator.open([rule('nested', NESTED), rule('cheap', "resource.name.startsWith('n')")], { budgetMs: 600_000, watchdogMs: 300 }));
    const batch = await evaluator.evaluate([node('n0', { l: items }), node('n1', { l: [1] })]);
    expect([...batch.violations.keys()].sort()).toEqual(['cheap:n0', 'cheap:n1']);
    expect([...batch.passes]).toEqual(['nested:n1']);
    expect(batch).toMatchObject({ evaluations: 4, errors: 1 });
    expect(batch.unknowns.get('nested:n0')).toMatchObject({ reason: 'budget_exceeded' });
    expect(evaluator.report()[0]).toMatchObject({
      evaluations: 2,
      errors: 1,
      budget_exceeded: 1,
      stopped: null,
      error: { resource_id: 'n0', message: expect.stringMatching(/^exceeded the evaluation budget of 600000 ms: stopped after \d+ ms without reaching a budget check$/) },
    });
  });

  it('an aborted audit stops the evaluation at once', async () => {
    const controller = new AbortController();
    const evaluator = (open = await RuleEvaluator.open([rule('nested', NESTED)], { budgetMs: 600_000, signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    await expect(evaluator.evaluate([node('n0', { l: items })])).rejects.toThrow('audit aborted');
  });
});
