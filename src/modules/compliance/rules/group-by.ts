import type { GroupBy } from './rule-types.js';

/**
 * The rules of a rule's `group_by` that rule content (YAML, checked with lines) and custom rules
 * (the API, checked by the schema) share: one definition each, so both accept the same thing.
 */

/** The noun naming a cause in group labels ("security group", "DB cluster"). */
export const CAUSE_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9 _-]{0,58}[A-Za-z0-9])?$';
/** An edge type as the graph API accepts it. */
export const EDGE_TYPE_PATTERN = '^[a-z0-9][a-z0-9_.-]*$';

export const NEEDS_ONE_SOURCE = 'group_by needs exactly one of self, path or edge';
export const NODE_TYPE_WITHOUT_EDGE = 'group_by.node_type goes only with edge';

/** The fields of a group_by as written, before its one source is known. */
export interface GroupByFields {
  cause: string;
  self?: unknown;
  path?: string;
  edge?: string;
  node_type?: string;
}

/** What is wrong with the choice of source (one of self, path or edge; node_type only with edge), or null. */
export function groupBySourceProblem(g: Omit<GroupByFields, 'cause'>): typeof NEEDS_ONE_SOURCE | typeof NODE_TYPE_WITHOUT_EDGE | null {
  if ([g.self, g.path, g.edge].filter((v) => v !== undefined).length !== 1) return NEEDS_ONE_SOURCE;
  if (g.node_type !== undefined && g.edge === undefined) return NODE_TYPE_WITHOUT_EDGE;
  return null;
}

/** The GroupBy of fields without a source problem: the one source given, in its shape. */
export function toGroupBy(g: GroupByFields): GroupBy {
  if (g.path !== undefined) return { cause: g.cause, path: g.path };
  if (g.edge !== undefined) return g.node_type === undefined ? { cause: g.cause, edge: g.edge } : { cause: g.cause, edge: g.edge, node_type: g.node_type };
  return { cause: g.cause, self: true };
}
