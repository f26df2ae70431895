import { describe, expect, it } from 'vitest';
import { causeOf, groupOf, valuesAt } from './grouping.js';
import { groupIdOf } from './identity.js';

const instance = (id: string, groups: string[], extra: Record<string, unknown> = {}) => ({
  id: `aws:eu-west-1:aws.ec2.instance:${id}`,
  native_id: id,
  account_id: '123456789012',
  region: 'eu-west-1',
  properties: { configuration: { securityGroups: groups.map((groupId) => ({ groupId, groupName: `n-${groupId}` })), ...extra } },
});
const byGroups = { cause: 'security group', path: 'configuration.securityGroups.groupId' };

describe('valuesAt', () => {
  it('walks through lists and objects, keeps distinct non-empty strings and numbers, sorted', () => {
    const props = { configuration: { a: [{ b: 'y' }, { b: ['x', 'y', ''] }, { b: null }, { c: 1 }], n: 5, o: { deep: true } } };
    expect(valuesAt(props, 'configuration.a.b')).toEqual(['x', 'y']);
    expect(valuesAt(props, 'configuration.n')).toEqual(['5']);
    expect(valuesAt(props, 'configuration.o')).toEqual([]);
    expect(valuesAt(props, 'configuration.missing.b')).toEqual([]);
    expect(valuesAt({ configuration: null }, 'configuration.x')).toEqual([]);
  });
});

describe('groupOf', () => {
  it('groups by the cause a property names, labelled by it, stable and independent of the resource', () => {
    const a = groupOf('r', byGroups, instance('i-1', ['sg-open']));
    const b = groupOf('r', byGroups, instance('i-2', ['sg-open']));
    const c = groupOf('r', byGroups, instance('i-3', ['sg-other']));
    expect(a).toEqual(b);
    expect(a.group_cause).toBe('security group sg-open');
    expect(c.group_id).not.toBe(a.group_id);
    expect(groupOf('r', byGroups, instance('i-1', ['sg-open']))).toEqual(a);
    // Another rule with the same cause is another group.
    expect(groupOf('other', byGroups, instance('i-1', ['sg-open'])).group_id).not.toBe(a.group_id);
    // The set of values is the cause, whatever their order.
    expect(groupOf('r', byGroups, instance('i-4', ['sg-b', 'sg-a']))).toEqual(groupOf('r', byGroups, instance('i-5', ['sg-a', 'sg-b'])));
  });

  it('falls back to rule, account and region without group_by or without a value', () => {
    const node = instance('i-1', []);
    const fallback = { group_id: groupIdOf('r', '123456789012', 'eu-west-1'), group_cause: null };
    expect(groupOf('r', null, node)).toEqual(fallback);
    expect(groupOf('r', byGroups, node)).toEqual(fallback);
    expect(groupOf('r', { cause: 'security group', edge: 'uses_security_group' }, node, [])).toEqual(fallback);
  });

  it('self: the resource is its own cause, named by its native id', () => {
    const sg = { id: 'aws:eu-west-1:aws.ec2.security_group:sg-1', native_id: 'sg-1', account_id: 'a', region: 'eu-west-1', properties: {} };
    const group = groupOf('r', { cause: 'security group', self: true }, sg);
    expect(group.group_cause).toBe('security group sg-1');
    expect(group.group_id).not.toBe(groupOf('r', { cause: 'security group', self: true }, { ...sg, id: sg.id + '2', native_id: 'sg-2' }).group_id);
  });

  it('edge: the neighbours over that edge type (of node_type when given) are the cause', () => {
    const node = instance('i-1', []);
    const neighbours = [
      { edge: 'uses_security_group', id: 'aws:eu-west-1:aws.ec2.security_group:sg-9', native_id: 'sg-9', type: 'aws.ec2.security_group' },
      { edge: 'in_subnet', id: 'aws:eu-west-1:aws.ec2.subnet:subnet-1', native_id: 'subnet-1', type: 'aws.ec2.subnet' },
    ];
    expect(causeOf({ cause: 'security group', edge: 'uses_security_group' }, node, neighbours)?.label).toBe('security group sg-9');
    expect(causeOf({ cause: 'security group', edge: 'uses_security_group', node_type: 'aws.ec2.network_interface' }, node, neighbours)).toBeNull();
  });

  it('labels name at most five values', () => {
    const many = instance('i-1', ['sg-1', 'sg-2', 'sg-3', 'sg-4', 'sg-5', 'sg-6', 'sg-7']);
    expect(groupOf('r', byGroups, many).group_cause).toBe('security group sg-1, sg-2, sg-3, sg-4, sg-5 and 2 more');
  });
});
