import type { Module } from '../module.js';
import { poamRoutes } from './routes.js';
import { followFindingEvents } from './finding-follower.js';

export const FOLLOW_JOB = 'poam.follow-finding-events';

/**
 * POA&M items (issue 11): routes, and the follower of finding events that moves items to verification
 * when an audit resolves their finding (and back to in_progress when it reappears). Other modules
 * create items through `createPoamItems` in poam-service.ts.
 */
export const poamModule: Module = {
  name: 'poam',
  routes: poamRoutes,
  jobs: (deps) => [{ kind: FOLLOW_JOB, maxAttempts: 3, run: async () => followFindingEvents(deps) }],
  schedules: () => [{ name: 'poam-finding-follower', kind: FOLLOW_JOB, intervalMs: 30_000 }],
};
