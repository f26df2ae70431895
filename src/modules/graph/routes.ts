import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createGraphService } from './graph-service.js';
import {
  Edge,
  EdgeBatch,
  EdgeBatchResult,
  EdgeInput,
  EdgeListQuery,
  EdgeParams,
  Node,
  NodeBatch,
  NodeBatchResult,
  NodeInput,
  NodeListQuery,
  NodeParams,
  Paged,
} from './schemas.js';

/** Nodes and edges of the token's workspace. */
export const graphRoutes: RoutePlugin = async (app, { deps }) => {
  const graph = createGraphService(deps);

  app.post(
    '/tenants/:tenantID/nodes',
    {
      config: { permission: 'nodes:write' },
      schema: {
        operationId: 'upsertNodes',
        tags: ['graph'],
        summary: 'Upsert one node, or a batch {nodes: [...]} of up to 5,000',
        params: TenantParams,
        body: Type.Union([NodeInput, NodeBatch]),
        response: withErrors({ 201: Type.Union([Node, NodeBatchResult]) }, [401, 403]),
      },
    },
    async (request, reply) => {
      const { scope } = contextOf(request);
      const body = request.body;
      if ('nodes' in body) return reply.status(201).send(await graph.upsertNodes(scope, body.nodes, true));
      const result = await graph.upsertNodes(scope, [body], false);
      return reply.status(201).send(result.items[0]);
    },
  );

  app.get(
    '/tenants/:tenantID/nodes',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'listNodes',
        summary: 'Nodes of the workspace, filtered by type, region, account or text',
        tags: ['graph'],
        params: TenantParams,
        querystring: NodeListQuery,
        response: withErrors({ 200: Paged(Node) }, [401, 403]),
      },
    },
    async (request) => {
      const { types, region, account_id, search, sort, page, per_page } = request.query;
      const filter = {
        types: types
          ?.split(',')
          .map((t) => t.trim())
          .filter(Boolean),
        region,
        accountId: account_id,
        search,
      };
      return graph.listNodes(contextOf(request).scope, filter, sort, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/nodes/:id',
    {
      config: { permission: 'nodes:read' },
      schema: { operationId: 'getNode', summary: 'A node with its properties', tags: ['graph'], params: NodeParams, response: withErrors({ 200: Node }, [401, 403, 404]) },
    },
    async (request) => graph.getNode(contextOf(request).scope, request.params.id),
  );

  app.delete(
    '/tenants/:tenantID/nodes/:id',
    {
      config: { permission: 'nodes:write' },
      schema: {
        operationId: 'deleteNode',
        tags: ['graph'],
        summary: 'Delete a node and its edges',
        params: NodeParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404]),
      },
    },
    async (request, reply) => {
      await graph.deleteNode(contextOf(request).scope, request.params.id);
      return reply.status(204).send();
    },
  );

  app.post(
    '/tenants/:tenantID/edges',
    {
      config: { permission: 'nodes:write' },
      schema: {
        operationId: 'upsertEdges',
        tags: ['graph'],
        summary: 'Upsert one edge, or a batch {edges: [...]}; both ends must be nodes of the workspace',
        params: TenantParams,
        body: Type.Union([EdgeInput, EdgeBatch]),
        response: withErrors({ 201: Type.Union([Edge, EdgeBatchResult]) }, [401, 403]),
      },
    },
    async (request, reply) => {
      const { scope } = contextOf(request);
      const body = request.body;
      if ('edges' in body) return reply.status(201).send(await graph.upsertEdges(scope, body.edges));
      const result = await graph.upsertEdges(scope, [body]);
      return reply.status(201).send(result.items[0]);
    },
  );

  app.get(
    '/tenants/:tenantID/edges',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'listEdges',
        summary: 'Edges of the workspace, filtered by an end node or type',
        tags: ['graph'],
        params: TenantParams,
        querystring: EdgeListQuery,
        response: withErrors({ 200: Paged(Edge) }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return graph.listEdges(contextOf(request).scope, filter, pageRequest({ page, per_page }));
    },
  );

  app.delete(
    '/tenants/:tenantID/edges/:id',
    {
      config: { permission: 'nodes:write' },
      schema: { operationId: 'deleteEdge', summary: 'Delete an edge', tags: ['graph'], params: EdgeParams, response: withErrors({ 204: Type.Null() }, [401, 403, 404]) },
    },
    async (request, reply) => {
      await graph.deleteEdge(contextOf(request).scope, request.params.id);
      return reply.status(204).send();
    },
  );
};
