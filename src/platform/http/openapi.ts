import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import swagger from '@fastify/swagger';
import { Type } from 'typebox';
import { finishDocument, PAGED, RATE_LIMITED } from './openapi-document.js';
import { pageShapeOf } from './page-links.js';

/** Registers the OpenAPI generator; must run before any route so every route is collected. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'ControlGraph API',
        version,
        description:
          'Multi-tenant compliance service over an infrastructure graph. Errors are `{error: {code, message, details}}`. ' +
          'Tenant endpoints live under /api/v1/tenants/{tenantID}; the workspace comes from the token.',
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A JWT from POST /api/v1/auth/token, or an API key (cg_…). The web console sends the same JWT in its HttpOnly ' +
              'cg_session cookie instead (POST /api/v1/auth/session), with the header x-controlgraph-csrf: 1 on POST, PUT, PATCH and DELETE.',
          },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}`,
    },
    transform: ({ schema, url, route }) => {
      const isPublic = route.config?.public === true;
      const transformed = { ...schema } as Record<string, unknown>;
      // Public operations say so (an empty requirement), the others name the bearer scheme.
      transformed.security = isPublic ? [] : [{ bearerAuth: [] }];
      // The authenticator's rule: every authenticated request spends the tenant's bucket unless the
      // route is unlimited (createAuthenticator in platform/auth/authenticator.ts).
      if (!isPublic && route.config?.unlimited !== true) transformed[RATE_LIMITED] = true;
      // The Link header of paged lists (page-links.ts decides from the same schema).
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const ok = (schema?.response as Record<string, unknown> | undefined)?.['200'];
      if (methods.includes('GET') && pageShapeOf(ok)) transformed[PAGED] = true;
      const permission = route.config?.permission;
      if (permission) {
        transformed['x-permission'] = permission;
        const description = (transformed.description as string | undefined) ?? '';
        transformed.description = `${description}${description ? '\n\n' : ''}Requires permission \`${permission}\`.`;
      }
      return { schema: transformed as typeof schema, url };
    },
    // Only the OpenAPI 3 document is built here (no Swagger 2 object).
    transformObject: (documents) => ('openapiObject' in documents ? finishDocument(documents.openapiObject as Record<string, unknown>) : documents.swaggerObject),
  });
}

/** Serves the generated document as YAML and JSON. */
export const openApiRoutes: FastifyPluginAsync = async (app) => {
  app.get(
    '/openapi.yaml',
    {
      config: { public: true },
      schema: { hide: true, response: { 200: Type.String() } },
    },
    async (_request, reply) => reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })),
  );
  app.get(
    '/openapi.json',
    {
      config: { public: true },
      schema: { hide: true, response: { 200: Type.Unsafe({ type: 'object', additionalProperties: true }) } },
    },
    async () => app.swagger(),
  );
};
