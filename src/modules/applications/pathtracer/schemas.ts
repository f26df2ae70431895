import { Type } from 'typebox';
import { Nullable, StringEnum, Uuid } from '../../../platform/http/schemas.js';
import { CRITICALITIES } from '../tables.js';
import { Health, SeverityCounts } from '../schemas.js';
import { BLAST_LIMITS } from './blast.js';
import { TRACE_LIMITS } from './trace.js';

const Endpoint = Type.String({ minLength: 1, maxLength: 1000, description: 'a node id, or "internet"' });
const EdgeTypes = Type.Array(Type.String({ minLength: 1, maxLength: 120 }), {
  maxItems: 50,
  description:
    'edge types to follow, each optionally with :forward, :reverse or :both; default: the traversable types of the README (connects_to, routes_to, protects, can_assume, trusts, …)',
});
const EdgeTypeUsed = Type.Object({ type: Type.String(), direction: StringEnum(['forward', 'reverse', 'both'] as const) });
const TruncationReason = Nullable(StringEnum(['max_nodes', 'max_edges', 'time_budget', 'enumeration_budget'] as const));

export const TraceBody = Type.Object(
  {
    source: Endpoint,
    target: Endpoint,
    max_depth: Type.Optional(Type.Integer({ minimum: 1, maximum: TRACE_LIMITS.maxDepth, default: TRACE_LIMITS.defaultDepth, description: 'longest path, in hops' })),
    edge_types: Type.Optional(EdgeTypes),
    max_paths: Type.Optional(Type.Integer({ minimum: 1, maximum: TRACE_LIMITS.maxPaths, default: TRACE_LIMITS.defaultPaths })),
    max_nodes: Type.Optional(
      Type.Integer({ minimum: 10, maximum: TRACE_LIMITS.maxNodes, default: TRACE_LIMITS.maxNodes, description: 'nodes the two searches may visit together' }),
    ),
  },
  { additionalProperties: false },
);

const NodeInfo = Type.Object({ name: Type.String(), type: Type.String(), region: Type.String() });

export const TraceResult = Type.Object({
  source: Type.String(),
  target: Type.String(),
  max_depth: Type.Integer(),
  max_paths: Type.Integer(),
  edge_types: Type.Array(EdgeTypeUsed),
  shortest_length: Nullable(Type.Integer()),
  paths: Type.Array(
    Type.Object({
      length: Type.Integer(),
      node_ids: Type.Array(Type.String()),
      hops: Type.Array(
        Type.Object({
          from: Type.String(),
          to: Type.String(),
          edge_types: Type.Array(Type.String(), { description: 'every edge type that allows this hop ("internet" for the virtual Internet edge)' }),
          edge_ids: Type.Array(Type.String()),
        }),
      ),
    }),
    { description: 'shortest first' },
  ),
  nodes: Type.Record(Type.String(), NodeInfo),
  paths_capped: Type.Boolean({ description: 'more paths within max_depth exist than max_paths' }),
  truncated: Type.Boolean({ description: 'a bound (nodes, edges, time) stopped the search: paths within max_depth may be missing' }),
  truncation_reason: TruncationReason,
  explored: Type.Object({ forward_depth: Type.Integer(), backward_depth: Type.Integer(), nodes: Type.Integer(), edges: Type.Integer(), elapsed_ms: Type.Integer() }),
});

export const BlastBody = Type.Object(
  {
    source: Endpoint,
    max_depth: Type.Optional(Type.Integer({ minimum: 1, maximum: BLAST_LIMITS.maxDepth, default: BLAST_LIMITS.defaultDepth })),
    edge_types: Type.Optional(EdgeTypes),
    max_nodes: Type.Optional(Type.Integer({ minimum: 1, maximum: BLAST_LIMITS.maxNodes, default: BLAST_LIMITS.defaultNodes })),
    limit: Type.Optional(
      Type.Integer({ minimum: 0, maximum: BLAST_LIMITS.maxListed, default: BLAST_LIMITS.defaultListed, description: 'reached nodes listed (nearest first); counts cover all' }),
    ),
  },
  { additionalProperties: false },
);

export const BlastResult = Type.Object({
  source: Type.String(),
  max_depth: Type.Integer(),
  edge_types: Type.Array(EdgeTypeUsed),
  total_reached: Type.Integer(),
  depth_reached: Type.Integer(),
  by_depth: Type.Array(Type.Object({ depth: Type.Integer(), nodes: Type.Integer() })),
  by_type: Type.Array(Type.Object({ type: Type.String(), nodes: Type.Integer() })),
  findings_by_severity: SeverityCounts,
  health: Health,
  applications: Type.Array(Type.Object({ id: Uuid, name: Type.String(), derived: Type.Boolean(), reached_resources: Type.Integer() })),
  services: Type.Array(Type.Object({ id: Uuid, name: Type.String(), criticality: StringEnum(CRITICALITIES), reached_resources: Type.Integer() })),
  nodes: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      type: Type.String(),
      region: Type.String(),
      depth: Type.Integer(),
      via: Type.Object({ from: Type.String(), edge_types: Type.Array(Type.String()) }),
    }),
  ),
  nodes_listed: Type.Integer(),
  depth_limited: Type.Boolean({ description: 'nodes lie beyond max_depth' }),
  truncated: Type.Boolean({ description: 'a bound (max_nodes, edges, time) stopped the search before max_depth' }),
  truncation_reason: Nullable(StringEnum(['max_nodes', 'max_edges', 'time_budget'] as const)),
  explored: Type.Object({ nodes: Type.Integer(), edges: Type.Integer(), elapsed_ms: Type.Integer() }),
});
