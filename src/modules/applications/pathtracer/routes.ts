import type { RoutePlugin } from '../../module.js';
import { contextOf } from '../../../platform/auth/authenticator.js';
import { TenantParams, withErrors } from '../../../platform/http/schemas.js';
import { createTracer } from './trace.js';
import { createBlastRadius } from './blast.js';
import { BlastBody, BlastResult, TraceBody, TraceResult } from './schemas.js';

const tags = ['path tracing'];

/** Paths between resources (or the Internet) and blast radius. */
export const pathTracerRoutes: RoutePlugin = async (app, { deps }) => {
  const trace = createTracer(deps);
  const blast = createBlastRadius(deps);

  app.post(
    '/tenants/:tenantID/pathtracer/trace',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'tracePaths',
        tags,
        summary: 'Paths from a source to a target (node ids or "internet") through traversable edges, shortest first',
        description:
          'Bidirectional breadth-first search bounded by max_depth (≤ 12), 50,000 nodes, 200,000 edges and 5 s; truncated answers say so (truncated, truncation_reason). 404 for an unknown node.',
        params: TenantParams,
        body: TraceBody,
        response: withErrors({ 200: TraceResult }, [401, 403, 404]),
      },
    },
    async (request) => trace(contextOf(request).scope, request.body),
  );

  app.post(
    '/tenants/:tenantID/pathtracer/blast-radius',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'blastRadius',
        tags,
        summary: 'Everything reachable from a node (or "internet"): nodes by depth and type, findings, applications and services hit',
        description: 'Breadth-first search bounded by max_depth (≤ 32), max_nodes (≤ 100,000), 500,000 edges and 10 s; truncated answers say so. 404 for an unknown node.',
        params: TenantParams,
        body: BlastBody,
        response: withErrors({ 200: BlastResult }, [401, 403, 404]),
      },
    },
    async (request) => blast(contextOf(request).scope, request.body),
  );
};
