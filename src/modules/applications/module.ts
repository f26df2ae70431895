import type { Module } from '../module.js';
import { applicationRoutes } from './application-routes.js';
import { serviceRoutes } from './service-routes.js';
import { assetGroupRoutes } from './asset-group-routes.js';
import { pathTracerRoutes } from './pathtracer/routes.js';
import { hostPackages } from '../agents/index.js';

/**
 * Applications (defined by a filter, or derived from resource tags), business services with their
 * roll-ups, SBOM and CVE exposure, asset groups, path tracing and blast radius (issue 12). User
 * documentation: docs/applications.md; the layout of this folder: README.md.
 *
 * For other modules:
 * - `serviceCriticality(deps)` / `resourceCriticality(db, scope, ids)` (criticality.ts): the criticality input
 *   of the risk score (modules/index.ts hands it to the compliance module);
 * - `assetGroupPredicate(db, scope, id)` / `assetGroupNodeIds(db, scope, id)` (asset-groups.ts): scope
 *   work (reports) by an asset group;
 * - `compileFilter(text)` (filter/sql.ts): the filter language as a SQL predicate over `nodes`.
 */
export const applicationsModule: Module = {
  name: 'applications',
  routes: async (app, options) => {
    await app.register(applicationRoutes, options);
    // The software of a service's hosts comes from the host agents' inventory (agents module).
    await app.register(serviceRoutes({ hostPackages }), options);
    await app.register(assetGroupRoutes, options);
    await app.register(pathTracerRoutes, options);
  },
};
