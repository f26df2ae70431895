import type { Module } from '../module.js';
import { discoveryRoutes } from './routes.js';
import { discoveryUploadRoutes } from './upload-routes.js';
import { connectionRoutes } from './connections/routes.js';
import { discoveryJob } from './discovery-job.js';
import { importRoutes } from './imports/routes.js';
import { importJob } from './imports/import-job.js';
import './tables.js';

/**
 * Discovery (issue 6; docs/exports.md): discovery jobs that read an estate (AWS through a cloud
 * connection, Terraform state, AWS Config snapshots, the demo estate) into the graph, then audit the
 * workspace; the cloud connections they use. It feeds the graph and exports nothing: the scanner
 * importers live here too.
 */
export const discoveryModule: Module = {
  name: 'discovery',
  routes: async (app, options) => {
    await app.register(discoveryRoutes, options);
    await app.register(discoveryUploadRoutes, options);
    await app.register(connectionRoutes, options);
    await app.register(importRoutes, options);
  },
  jobs: (deps) => [discoveryJob(deps), importJob(deps)],
};
