import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { Paged, PageQuery, TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createTenantService } from './tenant-service.js';
import { Tenant, TenantCreate, TenantUpdate } from './schemas.js';

/** The account's tenants, and each tenant's own record. */
export const tenantRoutes: RoutePlugin = async (app, { deps }) => {
  const tenants = createTenantService(deps);

  app.get(
    '/account/tenants',
    {
      schema: {
        operationId: 'listAccountTenants',
        tags: ['tenants'],
        summary: "Tenants of the caller's account that the caller can use",
        querystring: Type.Object(PageQuery),
        response: withErrors({ 200: Paged(Tenant) }, [401]),
      },
    },
    async (request) => tenants.listForAccount(contextOf(request), pageRequest(request.query)),
  );

  app.post(
    '/account/tenants',
    {
      config: { permission: 'tenants:create' },
      schema: {
        operationId: 'createTenant',
        tags: ['tenants'],
        summary: 'Create a tenant (with its default workspace); the creator becomes its tenant-admin',
        body: TenantCreate,
        response: withErrors({ 201: Tenant }, [401, 403, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await tenants.create(contextOf(request), request.body)),
  );

  app.get(
    '/tenants/:tenantID',
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'getTenant',
        summary: 'A tenant: name, slug, plan and onboarding state',
        tags: ['tenants'],
        params: TenantParams,
        response: withErrors({ 200: Tenant }, [401, 403, 404]),
      },
    },
    async (request) => tenants.get(contextOf(request).scope.tenantId),
  );

  app.put(
    '/tenants/:tenantID',
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'updateTenant',
        tags: ['tenants'],
        summary: 'Update name, slug or onboarding state (the plan: system-admin only)',
        params: TenantParams,
        body: TenantUpdate,
        response: withErrors({ 200: Tenant }, [401, 403, 404, 409]),
      },
    },
    async (request) => tenants.update(contextOf(request), contextOf(request).scope.tenantId, request.body),
  );

  app.delete(
    '/tenants/:tenantID',
    {
      config: { permission: 'tenant:delete' },
      schema: {
        operationId: 'deleteTenant',
        tags: ['tenants'],
        summary: 'Delete the tenant, all its workspaces and all their data',
        params: TenantParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404]),
      },
    },
    async (request, reply) => {
      await tenants.delete(contextOf(request), contextOf(request).scope.tenantId);
      return reply.status(204).send();
    },
  );
};
