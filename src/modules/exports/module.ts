import type { Module } from '../module.js';
import { exportRoutes } from './routes.js';
import { exportJob } from './export-job.js';
import { ABANDONED_UPLOADS_JOB, RETENTION_JOB, sweepAbandonedUploads, sweepRetention } from './retention.js';
import { reportRoutes } from './reports/routes.js';
import { reportJob } from './reports/report-job.js';

/** Topology exports and reports (issue 6; docs/exports.md). Discovery has its own module (modules/discovery). */
export const exportsModule: Module = {
  name: 'exports',
  routes: async (app, options) => {
    await app.register(exportRoutes, options);
    await app.register(reportRoutes, options);
  },
  jobs: (deps) => [
    exportJob(deps),
    reportJob(deps),
    { kind: RETENTION_JOB, maxAttempts: 3, run: async () => sweepRetention(deps) },
    { kind: ABANDONED_UPLOADS_JOB, maxAttempts: 3, run: async () => sweepAbandonedUploads(deps) },
  ],
  schedules: () => [
    { name: 'exports-retention-sweeper', kind: RETENTION_JOB, intervalMs: 60_000 },
    { name: 'artifacts-abandoned-sweeper', kind: ABANDONED_UPLOADS_JOB, intervalMs: 3_600_000 },
  ],
};
