import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../deps.js';
import type { JobDefinition } from '../platform/jobs/definition.js';
import type { ScheduleDefinition } from '../platform/jobs/scheduler.js';

/**
 * A domain module: its routes (mounted under /api/v1), its background job kinds and schedules, and
 * start-up work. Adding a domain means adding a folder and one line to modules/index.ts.
 */
/** A route plugin of a module, with TypeBox-typed handlers. */
export type RoutePlugin = FastifyPluginAsyncTypebox<{ deps: AppDeps }>;

export interface Module {
  name: string;
  routes?: RoutePlugin;
  /** Routes mounted at the root instead of /api/v1 (health, metrics). */
  rootRoutes?: RoutePlugin;
  jobs?: (deps: AppDeps) => JobDefinition<any>[];
  schedules?: (deps: AppDeps) => ScheduleDefinition[];
  /** Runs once per process after migrations, before serving (e.g. bootstrap data). */
  onStart?: (deps: AppDeps) => Promise<void>;
}
