import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { queueDepth } from '../../platform/jobs/queue.js';
import { StringEnum } from '../../platform/http/schemas.js';

const Health = Type.Object({
  status: StringEnum(['ok', 'degraded'] as const),
  db_connected: Type.Boolean(),
});

const Status = Type.Object({
  status: StringEnum(['ok', 'degraded'] as const),
  version: Type.String(),
  database: Type.Object({ kind: StringEnum(['pglite', 'postgres'] as const), connected: Type.Boolean() }),
  artifact_store: Type.Object({ kind: StringEnum(['file', 's3', 'none'] as const), available: Type.Boolean() }),
  queue: Type.Object({ queued: Type.Integer(), running: Type.Integer() }),
  uptime_seconds: Type.Integer(),
  started_at: Type.String({ format: 'date-time' }),
});

/** Health and status answer without authentication and are never rate limited. */
export const systemRootRoutes: RoutePlugin = async (app, { deps }) => {
  app.get(
    '/healthz',
    {
      config: { public: true, unlimited: true },
      schema: {
        operationId: 'getHealth',
        tags: ['system'],
        summary: 'Liveness and database connectivity',
        response: { 200: Health, 503: Health },
      },
    },
    async (_request, reply) => {
      const connected = await deps.database.ping();
      return reply.status(connected ? 200 : 503).send({ status: connected ? 'ok' : 'degraded', db_connected: connected });
    },
  );

  app.get(
    '/metrics',
    {
      config: { public: true, unlimited: true },
      schema: {
        operationId: 'getMetrics',
        tags: ['system'],
        summary: 'Prometheus metrics',
        produces: ['text/plain'],
        response: { 200: Type.String({ description: 'Prometheus text exposition format' }) },
      },
    },
    async (_request, reply) => {
      const depth = await queueDepth(deps.database.db).catch(() => null);
      if (depth) {
        deps.metrics.queueDepth.set({ status: 'queued' }, depth.queued);
        deps.metrics.queueDepth.set({ status: 'running' }, depth.running);
      }
      return reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
    },
  );
};

export const systemApiRoutes: RoutePlugin = async (app, { deps }) => {
  app.get(
    '/version',
    {
      config: { public: true },
      schema: {
        operationId: 'getVersion',
        tags: ['system'],
        summary: 'Service version and API version',
        response: { 200: Type.Object({ version: Type.String(), api: Type.String() }) },
      },
    },
    async () => ({ version: deps.version, api: 'v1' }),
  );

  app.get(
    '/status',
    {
      config: { public: true, unlimited: true },
      schema: {
        operationId: 'getStatus',
        tags: ['system'],
        summary: 'Version, database, queue depth and uptime',
        response: { 200: Status },
      },
    },
    async () => {
      const connected = await deps.database.ping();
      const depth = connected ? await queueDepth(deps.database.db) : { queued: 0, running: 0 };
      const storeAvailable = deps.artifacts ? await deps.artifacts.check() : false;
      const now = deps.clock.now();
      return {
        status: connected ? ('ok' as const) : ('degraded' as const),
        version: deps.version,
        database: { kind: deps.database.kind, connected },
        artifact_store: { kind: deps.artifacts?.kind ?? ('none' as const), available: storeAvailable },
        queue: depth,
        uptime_seconds: Math.max(0, Math.floor((now.getTime() - deps.startedAt.getTime()) / 1000)),
        started_at: deps.startedAt.toISOString(),
      };
    },
  );
};
