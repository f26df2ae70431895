import type { Module } from '../module.js';
import { scheduleRoutes } from './routes.js';
import { DISPATCH_INTERVAL_MS, DISPATCH_JOB, dispatchSchedules } from './dispatcher.js';
import './tables.js';

/**
 * Workspace schedules (issue 27 item 4; docs/schedules.md): discovery jobs and audits on a cron
 * expression or an interval. One recurring queue job dispatches them, so whichever scheduler process
 * fires it, each schedule runs once.
 */
export const schedulesModule: Module = {
  name: 'schedules',
  routes: scheduleRoutes,
  jobs: (deps) => [{ kind: DISPATCH_JOB, maxAttempts: 3, run: async () => dispatchSchedules(deps) }],
  schedules: () => [{ name: 'schedules-dispatcher', kind: DISPATCH_JOB, intervalMs: DISPATCH_INTERVAL_MS }],
};
