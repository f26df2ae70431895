import type { Module } from '../module.js';
import { deliveryJob } from './delivery-job.js';
import { sweepDeliveries } from './delivery-service.js';
import { dispatch, DISPATCH_JOB } from './dispatcher.js';
import { createHttpClient, type HttpClient } from './http-client.js';
import { integrationRoutes } from './routes.js';
import { deliverySettings } from './settings.js';

export const SWEEP_JOB = 'integrations.sweep-deliveries';
/** Finished deliveries (and their attempts) are kept this long. */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;

const clients = new WeakMap<object, HttpClient>();

/** Event delivery: integrations, webhooks, alert rules (issue 7). See README.md. */
export const integrationsModule: Module = {
  name: 'integrations',
  routes: integrationRoutes,
  jobs: (deps) => {
    const settings = deliverySettings(deps);
    let client = clients.get(deps);
    if (!client) {
      client = createHttpClient({ policy: settings.policy, bodyLimit: settings.responseBodyLimit });
      clients.set(deps, client);
    }
    return [
      {
        kind: DISPATCH_JOB,
        maxAttempts: 3,
        run: (_payload, ctx) => dispatch({ db: ctx.db, clock: ctx.clock, log: ctx.log }, { firstDelaySeconds: settings.retryScheduleSeconds[0] ?? 0 }, ctx.signal),
      },
      deliveryJob(deps, settings, client),
      { kind: SWEEP_JOB, maxAttempts: 3, run: async () => ({ deleted: await sweepDeliveries(deps, DELIVERY_RETENTION_MS) }) },
    ];
  },
  schedules: () => [
    // A safety net: the outbox trigger wakes the dispatcher as events are written.
    { name: 'integrations-dispatch', kind: DISPATCH_JOB, intervalMs: 10_000 },
    { name: 'integrations-delivery-retention', kind: SWEEP_JOB, intervalMs: 3_600_000 },
  ],
};
