import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createApplicationService } from './application-service.js';
import { createSuggestions } from './suggest.js';
import { Application, ApplicationBody, ApplicationDetail, ApplicationDetailQuery, ApplicationListQuery, ApplicationParams, Paged, SuggestBody, SuggestResult } from './schemas.js';

const tags = ['applications'];

/** POST /applications/suggest-services takes an optional body: a bare POST means the defaults. */
async function optionalBody(request: FastifyRequest) {
  if (request.body === undefined || request.body === null) request.body = {};
}

/** Applications: defined by a filter, or derived from resource tags. */
export const applicationRoutes: RoutePlugin = async (app, { deps }) => {
  const applications = createApplicationService(deps);
  const suggest = createSuggestions(deps);

  app.get(
    '/tenants/:tenantID/applications',
    {
      config: { permission: 'findings:read' },
      schema: {
        operationId: 'listApplications',
        tags,
        summary: 'Defined and derived applications with resource counts, findings by severity and health',
        description: 'Derived applications are brought in line with the resource tags (application, app, project, service, workload) on every list call.',
        params: TenantParams,
        querystring: ApplicationListQuery,
        response: withErrors({ 200: Paged(Application) }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...query } = request.query;
      return applications.list(contextOf(request).scope, query, pageRequest({ page, per_page }));
    },
  );

  app.post(
    '/tenants/:tenantID/applications',
    {
      config: { permission: 'applications:write' },
      schema: {
        operationId: 'createApplication',
        tags,
        summary: 'Define an application by a filter over the graph',
        description: '400 with the position of the error when the filter does not parse; 409 when the name is taken.',
        params: TenantParams,
        body: ApplicationBody,
        response: withErrors({ 201: Application }, [401, 403, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await applications.create(contextOf(request), request.body)),
  );

  // Registered before /applications/:app_id (a static segment wins anyway; this keeps the intent visible).
  app.post(
    '/tenants/:tenantID/applications/suggest-services',
    {
      config: { permission: 'nodes:read' },
      preValidation: optionalBody,
      schema: {
        operationId: 'suggestServices',
        tags,
        summary: 'Propose business services from the discovered applications',
        description:
          'Groups applications whose resources share a grouping tag value (project, service, workload, business-service, system, product), then by shared VPC, then by edges between their resources. Nothing is created: each proposal carries a body for POST /services.',
        params: TenantParams,
        body: SuggestBody,
        response: withErrors({ 200: SuggestResult }, [401, 403]),
      },
    },
    async (request) => suggest(contextOf(request).scope, request.body),
  );

  app.get(
    '/tenants/:tenantID/applications/:app_id',
    {
      config: { permission: 'findings:read' },
      schema: {
        operationId: 'getApplication',
        tags,
        summary: 'An application with its member resources (paged, worst first), findings by severity and health',
        params: ApplicationParams,
        querystring: ApplicationDetailQuery,
        response: withErrors({ 200: ApplicationDetail }, [401, 403, 404]),
      },
    },
    async (request) => applications.get(contextOf(request).scope, request.params.app_id, pageRequest(request.query)),
  );

  app.put(
    '/tenants/:tenantID/applications/:app_id',
    {
      config: { permission: 'applications:write' },
      schema: {
        operationId: 'updateApplication',
        tags,
        summary: 'Replace the name, description and filter of a defined application',
        description: '409 for a derived application (it follows the tags) or a name already taken.',
        params: ApplicationParams,
        body: ApplicationBody,
        response: withErrors({ 200: Application }, [401, 403, 404, 409]),
      },
    },
    async (request) => applications.update(contextOf(request), request.params.app_id, request.body),
  );

  app.delete(
    '/tenants/:tenantID/applications/:app_id',
    {
      config: { permission: 'applications:write' },
      schema: {
        operationId: 'deleteApplication',
        tags,
        summary: 'Delete a defined application (it leaves the business services that listed it)',
        params: ApplicationParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => {
      await applications.remove(contextOf(request), request.params.app_id);
      return reply.status(204).send();
    },
  );
};
