import { describe, expect, it } from 'vitest';
import { compileCondition } from './cel.js';
import { conditionReads } from './condition-reads.js';
import { loadBuiltinRules } from './content-loader.js';
import { propertyModel } from './property-paths.js';
import type { RuleDefinition } from './rule-types.js';

/**
 * The contract between built-in AWS rules and the property model (contracts §3): a rule reads only
 * property paths that exist in the AWS Config schema of its resource type, declares every one of them
 * in `reads`, and its condition reads nothing else. A `group_by` path is a property of the type too.
 */

const readsOf = (condition: string) => conditionReads(compileCondition(condition).ast);

describe('condition reads (CEL AST walk)', () => {
  it('collects member chains rooted at resource.properties, not other resource fields', () => {
    expect([...readsOf('resource.properties.configuration.a.b == 1 && resource.tags.env == "x" && resource.id != ""')]).toEqual([
      'configuration',
      'configuration.a',
      'configuration.a.b',
    ]);
  });

  it('resolves comprehension variables to their list path, nested and through filter and map', () => {
    const reads = readsOf(
      'resource.properties.configuration.perms.exists(p, p.ranges.all(r, r.cidr == "0.0.0.0/0") && [22, 3389].exists(port, p.from <= port)) ||' +
        ' resource.properties.configuration.perms.filter(p, p.open).map(p, p.name).exists(n, n == "x") ||' +
        ' resource.properties.configuration.items.map(i, i.on, i.flag).exists(f, f)',
    );
    expect(reads).toEqual(
      new Set([
        'configuration',
        'configuration.perms',
        'configuration.perms.ranges',
        'configuration.perms.ranges.cidr',
        'configuration.perms.from',
        'configuration.perms.open',
        'configuration.perms.name',
        'configuration.items',
        'configuration.items.on',
        'configuration.items.flag',
      ]),
    );
  });

  it('follows has(), cel.bind, string-literal and numeric indexes', () => {
    expect(readsOf('has(resource.properties.supplementaryConfiguration.X) && resource.properties["configuration"]["k"][0].z == 1')).toEqual(
      new Set(['supplementaryConfiguration', 'supplementaryConfiguration.X', 'configuration', 'configuration.k', 'configuration.k.z']),
    );
    expect(readsOf('cel.bind(e, resource.properties.configuration.entries, e.exists(x, x.port == 22))')).toEqual(
      new Set(['configuration', 'configuration.entries', 'configuration.entries.port']),
    );
  });
});

/** Everything wrong with a rule against the contract; empty when it holds. */
function contractProblems(rule: Pick<RuleDefinition, 'config_resource_type' | 'reads' | 'condition' | 'group_by'>): string[] {
  const schema = propertyModel();
  const configType = rule.config_resource_type;
  if (!configType || !schema.hasResourceType(configType)) return [`unknown AWS Config type ${configType}`];
  const problems = rule.reads.filter((p) => !schema.hasPath(configType, p)).map((p) => `declared ${p} is not a ${configType} property`);
  const read = readsOf(rule.condition);
  // A chain is covered when it is a declared path or lies on the way to one (a has() on a block, a list ranged over).
  const covered = (chain: string) => rule.reads.some((d) => d === chain || d.startsWith(chain + '.'));
  for (const chain of read) {
    if (!covered(chain)) problems.push(`reads ${chain} without declaring it`);
    if (!schema.hasPath(configType, chain)) problems.push(`reads ${chain}, not a ${configType} property`);
  }
  for (const d of rule.reads) if (!read.has(d)) problems.push(`declares ${d} but never reads it`);
  if (rule.group_by && 'path' in rule.group_by && !schema.hasPath(configType, rule.group_by.path)) {
    problems.push(`groups by ${rule.group_by.path}, not a ${configType} property`);
  }
  return problems;
}

describe('the contract check', () => {
  const base = { config_resource_type: 'AWS::EC2::Volume', reads: ['configuration.encrypted'], condition: 'resource.properties.configuration.encrypted != true' };

  it('accepts a rule that reads exactly its declared schema paths', () => {
    expect(contractProblems(base)).toEqual([]);
  });

  it('catches undeclared reads, paths outside the schema and stale declarations', () => {
    expect(contractProblems({ ...base, condition: base.condition + ' || resource.properties.configuration.size > 100' })).toEqual([
      'reads configuration.size without declaring it',
    ]);
    expect(
      contractProblems({
        ...base,
        reads: ['configuration.encrypted', 'configuration.isEncrypted'],
        condition: base.condition + ' || resource.properties.configuration.isEncrypted == false',
      }),
    ).toEqual(['declared configuration.isEncrypted is not a AWS::EC2::Volume property', 'reads configuration.isEncrypted, not a AWS::EC2::Volume property']);
    expect(contractProblems({ ...base, reads: ['configuration.encrypted', 'configuration.kmsKeyId'] })).toEqual(['declares configuration.kmsKeyId but never reads it']);
    expect(contractProblems({ ...base, condition: 'resource.properties.configuration.attachments.exists(a, a.deleteOnTermination)' })).toEqual([
      'reads configuration.attachments without declaring it',
      'reads configuration.attachments.deleteOnTermination without declaring it',
      'declares configuration.encrypted but never reads it',
    ]);
    expect(contractProblems({ ...base, group_by: { cause: 'snapshot', path: 'configuration.snapshotId' } })).toEqual([]);
    expect(contractProblems({ ...base, group_by: { cause: 'snapshot', path: 'configuration.sourceSnapshot' } })).toEqual([
      'groups by configuration.sourceSnapshot, not a AWS::EC2::Volume property',
    ]);
  });
});

describe('built-in AWS rules read only declared paths of their AWS Config type', () => {
  it.each(loadBuiltinRules().map((r) => [r.id, r] as const))('%s', (_id, rule) => {
    expect(contractProblems(rule)).toEqual([]);
  });
});
