import { Type } from 'typebox';
import { AnyObject, Nullable, Paged, Timestamp, Uuid, PageNumber } from '../../platform/http/schemas.js';

/** `<provider>.<service>.<type>`, lower case: checked by the service (normaliseNode). */
export const NODE_TYPE_PATTERN = '^[a-z0-9][a-z0-9-]*\\.[a-z0-9][a-z0-9_-]*\\.[a-z0-9][a-z0-9_-]*$';
/**
 * What the body schema checks of a node type: its characters only. The full shape, and that it
 * starts with the node's own provider, are checked by the service, whose message can say which
 * part is missing (a schema pattern could only say "must match pattern").
 */
const NODE_TYPE_CHARACTERS = '^[a-z0-9][a-z0-9_.-]*$';
export const MAX_BATCH = 5000;

const NodeSourceSchema = Type.Object(
  {
    kind: Type.String({ minLength: 1, maxLength: 50, description: 'e.g. terraform, aws-config, agent' }),
    address: Type.Optional(Type.String({ maxLength: 500 })),
    file: Type.Optional(Type.String({ maxLength: 500 })),
    content: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  },
  { additionalProperties: true },
);

export const NodeInput = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'defaults to <provider>:<region>:<type>:<native_id>' })),
    provider: Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 50 }),
    region: Type.String({ maxLength: 100, pattern: '^[^:]*$' }),
    type: Type.String({
      pattern: NODE_TYPE_CHARACTERS,
      maxLength: 200,
      description: "<provider>.<service>.<type> starting with the node's provider, lower case (e.g. aws.s3.bucket); 400 naming the missing part otherwise",
    }),
    native_id: Type.String({ minLength: 1, maxLength: 1000 }),
    name: Type.String({ maxLength: 1000 }),
    account_id: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    properties: Type.Optional(AnyObject),
    tags: Type.Optional(AnyObject),
    source: Type.Optional(Nullable(NodeSourceSchema)),
  },
  { additionalProperties: false },
);

const nodeSummaryFields = {
  id: Type.String(),
  provider: Type.String(),
  region: Type.String(),
  type: Type.String(),
  native_id: Type.String(),
  name: Type.String(),
  account_id: Nullable(Type.String()),
  workspace_id: Uuid,
  created_at: Timestamp,
  updated_at: Timestamp,
};
export const NodeSummary = Type.Object(nodeSummaryFields);
export const Node = Type.Object({ ...nodeSummaryFields, properties: AnyObject, tags: AnyObject, source: Nullable(AnyObject) });

export const NodeBatch = Type.Object({ nodes: Type.Array(NodeInput, { minItems: 1, maxItems: MAX_BATCH }) }, { additionalProperties: false });

export const NodeBatchResult = Type.Object({
  items: Type.Array(NodeSummary, { description: 'the upserted nodes without properties, tags and source' }),
  created: Type.Integer(),
  updated: Type.Integer(),
});

export const NODE_SORTS = ['id', 'name', 'type', 'region', 'created_at', 'updated_at'] as const;
export const NodeListQuery = Type.Object({
  types: Type.Optional(Type.String({ maxLength: 2000, description: 'comma-separated node types' })),
  region: Type.Optional(Type.String({ maxLength: 100 })),
  account_id: Type.Optional(Type.String({ maxLength: 200 })),
  search: Type.Optional(Type.String({ maxLength: 200, description: 'matches name, id or native id' })),
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  sort: Type.Optional(Type.String({ pattern: `^-?(${NODE_SORTS.join('|')})$`, description: `one of ${NODE_SORTS.join(', ')}; prefix - for descending` })),
});

export const EdgeInput = Type.Object(
  {
    source: Type.String({ minLength: 1, maxLength: 1000 }),
    target: Type.String({ minLength: 1, maxLength: 1000 }),
    type: Type.String({ pattern: '^[a-z0-9][a-z0-9_.-]*$', maxLength: 100 }),
    properties: Type.Optional(AnyObject),
  },
  { additionalProperties: false },
);
export const Edge = Type.Object({
  id: Uuid,
  source: Type.String(),
  target: Type.String(),
  type: Type.String(),
  properties: AnyObject,
  workspace_id: Uuid,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const EdgeBatch = Type.Object({ edges: Type.Array(EdgeInput, { minItems: 1, maxItems: MAX_BATCH }) }, { additionalProperties: false });
export const EdgeBatchResult = Type.Object({ items: Type.Array(Edge), created: Type.Integer(), updated: Type.Integer() });
export const EdgeListQuery = Type.Object({
  node: Type.Optional(Type.String({ maxLength: 1000, description: 'edges touching this node (either end)' })),
  source: Type.Optional(Type.String({ maxLength: 1000 })),
  target: Type.Optional(Type.String({ maxLength: 1000 })),
  type: Type.Optional(Type.String({ maxLength: 100 })),
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

export const NodeParams = Type.Object({ tenantID: Uuid, id: Type.String({ minLength: 1, maxLength: 1000 }) });
export const EdgeParams = Type.Object({ tenantID: Uuid, id: Uuid });

export { Paged };
