import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createAssetGroupService } from './asset-groups.js';
import { AssetGroup, AssetGroupBody, AssetGroupListQuery, AssetGroupParams, AssetGroupPatch, MemberNode, MembersQuery, Paged, Preview, PreviewBody } from './schemas.js';

const tags = ['asset groups'];

/** Asset groups: named filters over the graph, resolved to their member nodes when read. */
export const assetGroupRoutes: RoutePlugin = async (app, { deps }) => {
  const groups = createAssetGroupService(deps);

  app.get(
    '/tenants/:tenantID/asset-groups',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'listAssetGroups',
        summary: 'Asset groups of the workspace',
        tags,
        params: TenantParams,
        querystring: AssetGroupListQuery,
        response: withErrors({ 200: Paged(AssetGroup) }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...query } = request.query;
      return groups.list(contextOf(request).scope, query, pageRequest({ page, per_page }));
    },
  );

  app.post(
    '/tenants/:tenantID/asset-groups',
    {
      config: { permission: 'applications:write' },
      schema: {
        operationId: 'createAssetGroup',
        tags,
        summary: 'Create an asset group from a filter',
        description: '400 with the position of the error when the filter does not parse; 409 when the name is taken.',
        params: TenantParams,
        body: AssetGroupBody,
        response: withErrors({ 201: AssetGroup }, [401, 403, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await groups.create(contextOf(request), request.body)),
  );

  // Before /asset-groups/:id: "preview" is not an id.
  app.post(
    '/tenants/:tenantID/asset-groups/preview',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'previewAssetGroup',
        tags,
        summary: 'The members a filter would have, before saving it (paged)',
        params: TenantParams,
        body: PreviewBody,
        response: withErrors({ 200: Preview }, [401, 403]),
      },
    },
    async (request) => {
      const { filter, page, per_page } = request.body;
      return groups.preview(contextOf(request).scope, filter, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/asset-groups/:id',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'getAssetGroup',
        summary: 'An asset group with its filter',
        tags,
        params: AssetGroupParams,
        response: withErrors({ 200: AssetGroup }, [401, 403, 404]),
      },
    },
    async (request) => groups.get(contextOf(request).scope, request.params.id),
  );

  app.patch(
    '/tenants/:tenantID/asset-groups/:id',
    {
      config: { permission: 'applications:write' },
      schema: {
        operationId: 'updateAssetGroup',
        tags,
        summary: 'Change the name, description or filter of an asset group',
        params: AssetGroupParams,
        body: AssetGroupPatch,
        response: withErrors({ 200: AssetGroup }, [401, 403, 404, 409]),
      },
    },
    async (request) => groups.update(contextOf(request), request.params.id, request.body),
  );

  app.delete(
    '/tenants/:tenantID/asset-groups/:id',
    {
      config: { permission: 'applications:write' },
      schema: { operationId: 'deleteAssetGroup', summary: 'Delete an asset group', tags, params: AssetGroupParams, response: withErrors({ 204: Type.Null() }, [401, 403, 404]) },
    },
    async (request, reply) => {
      await groups.remove(contextOf(request), request.params.id);
      return reply.status(204).send();
    },
  );

  app.get(
    '/tenants/:tenantID/asset-groups/:id/members',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'listAssetGroupMembers',
        tags,
        summary: 'The member nodes of an asset group, resolved now (paged, by id)',
        params: AssetGroupParams,
        querystring: MembersQuery,
        response: withErrors({ 200: Paged(MemberNode) }, [401, 403, 404]),
      },
    },
    async (request) => groups.members(contextOf(request).scope, request.params.id, pageRequest(request.query)),
  );
};
