import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { Scope } from '../../../platform/db/scope.js';
import type { GroupBy } from '../rules/rule-types.js';
import { causeGroupIdOf, groupIdOf } from './identity.js';
import { neighboursOver } from '../../graph/index.js';

/**
 * Root-cause groups: findings of one rule with the same cause. A rule says what its cause is in its
 * content (`group_by`, see rule-types.ts): the resource itself, a property of the resource (the DB
 * cluster of an instance, the security groups an instance uses), or the node at the other end of one
 * of its edges. Without `group_by`, or when the resource has no value for it, the cause is unknown
 * and the group is the rule in the account and region. The audit computes the group of every
 * violation each time it sees it, so a finding moves with its cause.
 */

export interface GroupedNode {
  id: string;
  /** For labels; the node id when absent. */
  native_id?: string;
  account_id: string | null;
  region: string;
  properties: Record<string, unknown>;
}

/** A node at the other end of an edge of the resource. */
export interface Neighbour {
  edge: string;
  id: string;
  native_id: string;
  type: string;
}

export interface FindingGroupKey {
  group_id: string;
  /** The cause as group labels name it ("security group sg-123"); null when unknown. */
  group_cause: string | null;
}

const LABEL_VALUES = 5;

const flat = (value: unknown): unknown[] => (Array.isArray(value) ? value.flatMap(flat) : [value]);

/**
 * The distinct non-empty string and number values at a property path (schema form: lists are walked
 * through without being marked, so `configuration.securityGroups.groupId` collects every group id),
 * sorted.
 */
export function valuesAt(properties: unknown, path: string): string[] {
  let current: unknown[] = [properties];
  for (const key of path.split('.')) {
    const next: unknown[] = [];
    for (const value of current.flatMap(flat)) {
      if (value !== null && typeof value === 'object' && Object.hasOwn(value, key)) next.push((value as Record<string, unknown>)[key]);
    }
    current = next;
  }
  const values = new Set<string>();
  for (const value of current.flatMap(flat)) {
    if ((typeof value === 'string' && value.trim() !== '') || (typeof value === 'number' && Number.isFinite(value))) values.add(String(value));
  }
  return [...values].sort();
}

/** "security group sg-1", "security group sg-1, sg-2", "security group sg-1, …, sg-5 and 3 more". */
function describe(cause: string, values: string[]): string {
  const shown = values.slice(0, LABEL_VALUES).join(', ');
  return values.length > LABEL_VALUES ? `${cause} ${shown} and ${values.length - LABEL_VALUES} more` : `${cause} ${shown}`;
}

/** The cause of one violating resource: a key that identifies it and its label; null when unknown. */
export function causeOf(groupBy: GroupBy, node: GroupedNode, neighbours: Neighbour[] = []): { key: string; label: string } | null {
  if ('self' in groupBy) {
    return { key: `node\u0000${node.id}`, label: describe(groupBy.cause, [node.native_id ?? node.id]) };
  }
  if ('path' in groupBy) {
    const values = valuesAt(node.properties, groupBy.path);
    if (values.length === 0) return null;
    // Property values (sg-123, a cluster name) are identifiers within an account and region.
    return {
      key: ['value', node.account_id ?? '', node.region, groupBy.path, ...values].join('\u0000'),
      label: describe(groupBy.cause, values),
    };
  }
  const linked = new Map<string, Neighbour>();
  for (const n of neighbours) {
    if (n.edge === groupBy.edge && (groupBy.node_type === undefined || n.type === groupBy.node_type)) linked.set(n.id, n);
  }
  if (linked.size === 0) return null;
  const ids = [...linked.keys()].sort();
  return {
    key: ['node', ...ids].join('\u0000'),
    label: describe(
      groupBy.cause,
      ids.map((id) => linked.get(id)!.native_id),
    ),
  };
}

/** The group of a violation of `ruleId` on `node`. */
export function groupOf(ruleId: string, groupBy: GroupBy | null | undefined, node: GroupedNode, neighbours?: Neighbour[]): FindingGroupKey {
  const cause = groupBy ? causeOf(groupBy, node, neighbours) : null;
  if (!cause) return { group_id: groupIdOf(ruleId, node.account_id ?? '', node.region), group_cause: null };
  return { group_id: causeGroupIdOf(ruleId, cause.key), group_cause: cause.label };
}

/** The neighbours of `resourceIds` over edges of `edgeTypes`, in either direction, by resource id. */
export async function neighboursOf(db: Kysely<Database>, scope: Scope, edgeTypes: string[], resourceIds: string[]): Promise<Map<string, Neighbour[]>> {
  const out = new Map<string, Neighbour[]>();
  if (edgeTypes.length === 0 || resourceIds.length === 0) return out;
  const rows = await neighboursOver(db, scope, edgeTypes, resourceIds);
  for (const { resource_id, ...neighbour } of rows) {
    const list = out.get(resource_id) ?? [];
    list.push(neighbour);
    out.set(resource_id, list);
  }
  return out;
}

/** The groups of a batch's violations, by finding id; reads edges only for rules grouped by one. */
export async function groupsOf(
  db: Kysely<Database>,
  scope: Scope,
  violations: Iterable<[string, { rule: { id: string; group_by: GroupBy | null }; node: GroupedNode }]>,
): Promise<Map<string, FindingGroupKey>> {
  const entries = [...violations];
  const edgeTypes = new Set<string>();
  const linkedIds = new Set<string>();
  for (const [, { rule, node }] of entries) {
    if (rule.group_by && 'edge' in rule.group_by) {
      edgeTypes.add(rule.group_by.edge);
      linkedIds.add(node.id);
    }
  }
  const neighbours = await neighboursOf(db, scope, [...edgeTypes], [...linkedIds]);
  return new Map(entries.map(([id, { rule, node }]) => [id, groupOf(rule.id, rule.group_by, node, neighbours.get(node.id))]));
}
