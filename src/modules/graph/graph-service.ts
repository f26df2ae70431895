import type { Static } from 'typebox';
import type { AppDeps } from '../../deps.js';
import { inScope, type Scope } from '../../platform/db/scope.js';
import { badRequest, notFound } from '../../platform/http/errors.js';
import { toPage, type PageRequest } from '../../platform/http/pagination.js';
import { deleteEdge, listEdges, upsertEdges, type EdgeFilter, type EdgeRecord } from './edge-repo.js';
import { deleteNode, getNode, listNodes, missingNodes, upsertNodes, type NodeFilter, type NodeRecord } from './node-repo.js';
import { NODE_TYPE_PATTERN, type EdgeInput, type NodeInput } from './schemas.js';
import { rescoreAround } from '../compliance/index.js';
import { neighbourIds } from './edge-reads.js';

const TYPE_SHAPE = new RegExp(NODE_TYPE_PATTERN);

type Deps = Pick<AppDeps, 'database' | 'clock'>;

/** The default node id: `<provider>:<region>:<type>:<native_id>`. */
export function defaultNodeId(node: { provider: string; region: string; type: string; native_id: string }): string {
  return `${node.provider}:${node.region}:${node.type}:${node.native_id}`;
}

/**
 * Checks a node and fills its defaults. A given id must have the shape
 * `<provider>:<region>:<type>:<native id>` with the node's own provider, region and type.
 */
export function normaliseNode(input: Static<typeof NodeInput>, index?: number): NodeRecord {
  const where = index === undefined ? '' : `nodes[${index}]: `;
  if (!input.type.startsWith(`${input.provider}.`)) {
    // The usual slip: the AWS-style "s3.bucket" without the provider in front. Name the fix.
    const prefixed = `${input.provider}.${input.type}`;
    const message = TYPE_SHAPE.test(prefixed)
      ? `type "${input.type}" lacks its provider prefix: use "${prefixed}" (a node type is <provider>.<service>.<type>)`
      : `type "${input.type}" must start with its provider "${input.provider}." (a node type is <provider>.<service>.<type>, e.g. aws.s3.bucket)`;
    throw badRequest(`${where}${message}`, { index: index ?? null, field: 'type' });
  }
  if (!TYPE_SHAPE.test(input.type)) {
    throw badRequest(`${where}type "${input.type}" must be <provider>.<service>.<type> (e.g. aws.s3.bucket)`, { index: index ?? null, field: 'type' });
  }
  const id = input.id ?? defaultNodeId(input);
  if (input.id !== undefined) {
    const prefix = `${input.provider}:${input.region}:${input.type}:`;
    if (!input.id.startsWith(prefix) || input.id.length === prefix.length) {
      throw badRequest(`${where}id "${input.id}" must have the shape <provider>:<region>:<type>:<native_id> (expected prefix "${prefix}")`, {
        index: index ?? null,
        field: 'id',
      });
    }
  }
  return {
    id,
    provider: input.provider,
    region: input.region,
    type: input.type,
    native_id: input.native_id,
    name: input.name,
    account_id: input.account_id ?? null,
    properties: input.properties ?? {},
    tags: input.tags ?? {},
    source: input.source ?? null,
  };
}

/** Within one batch the last occurrence of an id wins (one statement cannot touch a row twice). */
function lastWins<T>(items: T[], key: (item: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    byKey.delete(k);
    byKey.set(k, item);
  }
  return [...byKey.values()];
}

// The stored risk scores of findings follow the graph (exposure through edges, criticality through
// the applications a node's properties place it in): each write rescores the findings it can move.
export function createGraphService(deps: Deps) {
  const db = deps.database.db;
  return {
    async upsertNodes(scope: Scope, inputs: Array<Static<typeof NodeInput>>, batch: boolean) {
      const nodes = lastWins(
        inputs.map((n, i) => normaliseNode(n, batch ? i : undefined)),
        (n) => n.id,
      );
      // A single node comes back whole; a batch answers with summaries (echoing megabytes of
      // properties back would cost more than storing them).
      const written = await upsertNodes(db, scope, nodes, deps.clock.now(), !batch);
      await rescoreAround(
        db,
        scope,
        deps.clock.now(),
        nodes.map((n) => n.id),
      );
      return written;
    },

    async listNodes(scope: Scope, filter: NodeFilter, sort: string | undefined, page: PageRequest) {
      const desc = sort?.startsWith('-') ?? false;
      const column = sort ? sort.replace(/^-/, '') : 'id';
      const { items, total } = await listNodes(db, scope, filter, { column, desc }, page);
      return toPage(items, total, page);
    },

    async getNode(scope: Scope, id: string) {
      const node = await getNode(db, scope, id);
      if (!node) throw notFound('node not found');
      return node;
    },

    async deleteNode(scope: Scope, id: string) {
      const neighbours = await neighbourIds(db, scope, [id]);
      if (!(await deleteNode(db, scope, id))) throw notFound('node not found');
      await rescoreAround(db, scope, deps.clock.now(), [], neighbours);
    },

    /** Both ends of every edge must be nodes of the same workspace (400 naming the missing ones). */
    async upsertEdges(scope: Scope, inputs: Array<Static<typeof EdgeInput>>) {
      const edges: EdgeRecord[] = lastWins(
        inputs.map((e) => ({ source: e.source, target: e.target, type: e.type, properties: e.properties ?? {} })),
        (e) => `${e.source}\u0000${e.target}\u0000${e.type}`,
      );
      const missing = await missingNodes(
        db,
        scope,
        edges.flatMap((e) => [e.source, e.target]),
      );
      if (missing.length) {
        throw badRequest(`edge endpoints are not nodes of this workspace: ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''}`, {
          missing_nodes: missing.slice(0, 1000),
        });
      }
      const written = await upsertEdges(db, scope, edges, deps.clock.now());
      await rescoreAround(
        db,
        scope,
        deps.clock.now(),
        edges.flatMap((e) => [e.source, e.target]),
      );
      return written;
    },

    async listEdges(scope: Scope, filter: EdgeFilter, page: PageRequest) {
      const { items, total } = await listEdges(db, scope, filter, page);
      return toPage(items, total, page);
    },

    async deleteEdge(scope: Scope, id: string) {
      const edge = await db.selectFrom('edges').select(['source', 'target']).where(inScope(scope)).where('id', '=', id).executeTakeFirst();
      if (!(await deleteEdge(db, scope, id))) throw notFound('edge not found');
      await rescoreAround(db, scope, deps.clock.now(), [], edge ? [edge.source, edge.target] : []);
    },
  };
}

export type GraphService = ReturnType<typeof createGraphService>;
