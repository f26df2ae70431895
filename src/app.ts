import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type RouteOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppDeps } from './deps.js';
import { modules as allModules } from './modules/index.js';
import type { Module } from './modules/module.js';
import { installDraining } from './platform/http/draining.js';
import { installErrorHandling, sendError } from './platform/http/error-handler.js';
import { answerClientError } from './platform/http/client-errors.js';
import { AppError, CODE_BY_STATUS } from './platform/http/errors.js';
import { installInputGuards } from './platform/http/input-guards.js';
import { MAX_PATH_PARAM_LENGTH, PATH_PARAM_TOO_LONG } from './platform/http/path-limits.js';
import { installPageLinks } from './platform/http/page-links.js';
import { installReadCache } from './platform/http/read-cache.js';
import { installRequestLog } from './platform/http/request-log.js';
import { ErrorBody } from './platform/http/schemas.js';
import { openApiRoutes, registerOpenApi } from './platform/http/openapi.js';
import './platform/http/route-config.js';
import { createAuthenticator } from './platform/auth/authenticator.js';
import { AUTH_CHANNEL } from './platform/auth/auth-cache.js';

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    /** Every route registered, for the route-table tests (authorization, tenancy, OpenAPI coverage). */
    routeTable: RouteOptions[];
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface BuildAppOptions {
  modules?: Module[];
}

/** Builds the HTTP application without listening: the CLI listens, tests inject. */
export async function buildApp(deps: AppDeps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    bodyLimit: deps.config.bodyLimitBytes,
    trustProxy: deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false,
    requestIdHeader: false,
    // One line per request instead of Fastify's two (platform/http/request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    // A client-supplied request id is kept when it is sane, so a trace can span services.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: {
      customOptions: {
        // Unknown properties of a closed object are an error (400), not silently dropped.
        removeAdditional: false,
        coerceTypes: 'array',
        useDefaults: true,
        allErrors: false,
      },
    },
    // Router-level refusals (a path parameter over maxParamLength, a bad URL) get the envelope too.
    frameworkErrors: (error, request, reply) => {
      const status = (error as { statusCode?: number }).statusCode ?? 400;
      void sendError(reply, new AppError(status, CODE_BY_STATUS[status] ?? 'BAD_REQUEST', status === 414 ? PATH_PARAM_TOO_LONG : error.message));
    },
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    clientErrorHandler: answerClientError,
    // Requests that reach a closing service are refused in the envelope (platform/http/draining.ts).
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('deps', deps);
  app.decorate('routeTable', [] as RouteOptions[]);
  app.addHook('onRoute', (route) => {
    app.routeTable.push(route);
  });
  app.addSchema(ErrorBody);
  installErrorHandling(app);
  installDraining(app);
  installInputGuards(app);
  installPageLinks(app);
  installRequestLog(app);
  await registerOpenApi(app, deps.version);

  app.decorateRequest('ctx', null);
  // Another process changed sessions, keys or memberships: drop cached identities.
  const stopListening = await deps.database.notifier.listen(AUTH_CHANNEL, () => deps.authCache.invalidate());
  app.addHook('onClose', async () => {
    await stopListening();
  });
  // Parses cookies before the authenticator, which reads the console's session cookie.
  await app.register(fastifyCookie);
  const authenticate = createAuthenticator(deps);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    await authenticate(request, reply);
  });
  installReadCache(app, deps);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.httpDuration.observe({ method: request.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });

  const modules = options.modules ?? allModules;
  for (const module of modules) {
    if (module.rootRoutes) await app.register(module.rootRoutes, { deps });
  }
  await app.register(
    async (api) => {
      await api.register(openApiRoutes);
      for (const module of modules) {
        if (module.routes) await api.register(module.routes, { deps });
      }
    },
    { prefix: '/api/v1' },
  );
  await app.ready();
  return app as unknown as FastifyInstance;
}
