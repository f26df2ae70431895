import type { Module } from '../module.js';
import { exportRoutes } from './routes.js';
import { exportJob } from './export-job.js';
import { ABANDONED_UPLOADS_JOB, RETENTION_JOB, sweepAbandonedUploads, sweepRetention } from './retention.js';
import { discoveryRoutes } from './discovery/routes.js';
import { discoveryUploadRoutes } from './discovery/upload-routes.js';
import { connectionRoutes } from './discovery/connections/routes.js';
import { discoveryJob } from './discovery/discovery-job.js';
import { reportRoutes } from './reports/routes.js';
import { reportJob } from './reports/report-job.js';

/** Topology exports, discovery jobs and their cloud connections, and reports (issue 6; docs/exports.md). */
export const exportsModule: Module = {
  name: 'exports',
  routes: async (app, options) => {
    await app.register(exportRoutes, options);
    await app.register(discoveryRoutes, options);
    await app.register(discoveryUploadRoutes, options);
    await app.register(connectionRoutes, options);
    await app.register(reportRoutes, options);
  },
  jobs: (deps) => [
    exportJob(deps),
    discoveryJob(deps),
    reportJob(deps),
    { kind: RETENTION_JOB, maxAttempts: 3, run: async () => sweepRetention(deps) },
    { kind: ABANDONED_UPLOADS_JOB, maxAttempts: 3, run: async () => sweepAbandonedUploads(deps) },
  ],
  schedules: () => [
    { name: 'exports-retention-sweeper', kind: RETENTION_JOB, intervalMs: 60_000 },
    { name: 'artifacts-abandoned-sweeper', kind: ABANDONED_UPLOADS_JOB, intervalMs: 3_600_000 },
  ],
};
