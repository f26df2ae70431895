import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { PageQuery, Paged, withErrors } from '../../platform/http/schemas.js';
import { createWorkspaceService } from './workspace-service.js';
import { IdParams, Workspace, WorkspaceBody } from './schemas.js';

/** Workspaces of the token's tenant. */
export const workspaceRoutes: RoutePlugin = async (app, { deps }) => {
  const workspaces = createWorkspaceService(deps);

  app.get(
    '/workspaces',
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'listWorkspaces',
        summary: "Workspaces of the token's tenant, the default first",
        tags: ['workspaces'],
        querystring: Type.Object(PageQuery),
        response: withErrors({ 200: Paged(Workspace) }, [401, 403]),
      },
    },
    async (request) => workspaces.list(contextOf(request), pageRequest(request.query)),
  );

  app.post(
    '/workspaces',
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'createWorkspace',
        summary: "Create a workspace in the token's tenant",
        tags: ['workspaces'],
        body: WorkspaceBody,
        response: withErrors({ 201: Workspace }, [401, 403, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await workspaces.create(contextOf(request), request.body.name)),
  );

  app.get(
    '/workspaces/:id',
    {
      config: { permission: 'tenant:read' },
      schema: { operationId: 'getWorkspace', summary: 'A workspace', tags: ['workspaces'], params: IdParams, response: withErrors({ 200: Workspace }, [401, 403, 404]) },
    },
    async (request) => workspaces.get(contextOf(request), request.params.id),
  );

  app.patch(
    '/workspaces/:id',
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'renameWorkspace',
        summary: 'Rename a workspace',
        tags: ['workspaces'],
        params: IdParams,
        body: WorkspaceBody,
        response: withErrors({ 200: Workspace }, [401, 403, 404, 409]),
      },
    },
    async (request) => workspaces.rename(contextOf(request), request.params.id, request.body.name),
  );

  app.delete(
    '/workspaces/:id',
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'deleteWorkspace',
        tags: ['workspaces'],
        summary: 'Delete a workspace and all its data (not the default or only one)',
        params: IdParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404]),
      },
    },
    async (request, reply) => {
      await workspaces.delete(contextOf(request), request.params.id);
      return reply.status(204).send();
    },
  );
};
