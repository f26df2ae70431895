import type { Module } from '../module.js';
import { riskRoutes } from './routes.js';
import { sweepExpired } from './acceptance-service.js';

export const EXPIRY_JOB = 'risk.record-expiries';

/** Risk acceptance; a sweeper records expiries (their effect is already computed on read). */
export const riskModule: Module = {
  name: 'risk',
  routes: riskRoutes,
  jobs: (deps) => [{ kind: EXPIRY_JOB, maxAttempts: 3, run: async () => ({ recorded: await sweepExpired(deps) }) }],
  schedules: () => [{ name: 'risk-expiry-sweeper', kind: EXPIRY_JOB, intervalMs: 60_000 }],
};
