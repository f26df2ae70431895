import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { Paged, PageQuery, TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createApiKeyService } from './api-key-service.js';
import { ApiKey, ApiKeyCreate, CreatedApiKey, IdParams, TenantApiKeyCreate } from './schemas.js';

export const apiKeyRoutes: RoutePlugin = async (app, { deps }) => {
  const keys = createApiKeyService(deps);

  app.post(
    '/api-keys',
    {
      config: { permission: 'api_keys:manage' },
      schema: {
        operationId: 'createApiKey',
        tags: ['api-keys'],
        summary: 'Create an API key for one or more tenants (the key is shown only in this response)',
        body: ApiKeyCreate,
        response: withErrors({ 201: CreatedApiKey }, [401, 403]),
      },
    },
    async (request, reply) => reply.status(201).send(await keys.create(contextOf(request), request.body, { tenantScoped: false })),
  );

  app.post(
    '/tenants/:tenantID/api-keys',
    {
      config: { permission: 'api_keys:manage' },
      schema: {
        operationId: 'createTenantApiKey',
        tags: ['api-keys'],
        summary: 'Create an API key for this tenant, optionally restricted to addresses (allowed_ips)',
        params: TenantParams,
        body: TenantApiKeyCreate,
        response: withErrors({ 201: CreatedApiKey }, [401, 403]),
      },
    },
    async (request, reply) => reply.status(201).send(await keys.create(contextOf(request), request.body, { tenantScoped: true })),
  );

  app.get(
    '/api-keys',
    {
      config: { permission: 'api_keys:manage' },
      schema: {
        operationId: 'listApiKeys',
        tags: ['api-keys'],
        summary: "API keys usable in the token's tenant (never the key values)",
        querystring: Type.Object(PageQuery),
        response: withErrors({ 200: Paged(ApiKey) }, [401, 403]),
      },
    },
    async (request) => keys.list(contextOf(request), pageRequest(request.query)),
  );

  app.delete(
    '/api-keys/:id',
    {
      config: { permission: 'api_keys:manage' },
      schema: {
        operationId: 'revokeApiKey',
        tags: ['api-keys'],
        summary: 'Revoke an API key (it answers 401 from then on)',
        params: IdParams,
        response: withErrors({ 200: ApiKey }, [401, 403, 404]),
      },
    },
    async (request) => keys.revoke(contextOf(request), request.params.id),
  );
};
