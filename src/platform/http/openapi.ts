import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import swagger from '@fastify/swagger';
import { Type } from 'typebox';

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
            description: 'A JWT from POST /api/v1/auth/token, or an API key (cg_…)',
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
      if (!isPublic) transformed.security = [{ bearerAuth: [] }];
      const permission = route.config?.permission;
      if (permission) {
        transformed['x-permission'] = permission;
        const description = (transformed.description as string | undefined) ?? '';
        transformed.description = `${description}${description ? '\n\n' : ''}Requires permission \`${permission}\`.`;
      }
      return { schema: transformed as typeof schema, url };
    },
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
