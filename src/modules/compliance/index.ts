import type { Module } from '../module.js';
import { complianceRoutes } from './routes.js';
import { findingRoutes } from './findings/routes.js';
import { createCveIntel } from '../vulndb/index.js';
import { serviceCriticality } from '../applications/index.js';
import { findingStreamRoutes } from './stream-routes.js';
import { auditJob } from './audit/audit-job.js';
import { builtinRules } from './rule-catalog.js';
import { frameworks } from './frameworks.js';

/** Frameworks, rules, audits, findings, scores, remediation. */
export const complianceModule: Module = {
  name: 'compliance',
  routes: async (app, options) => {
    await app.register(complianceRoutes, options);
    // The risk score reads KEV and EPSS from the vulnerability store and the criticality of the
    // business services a resource belongs to.
    await app.register(findingRoutes({ cveIntel: createCveIntel(options.deps.database.db), criticality: serviceCriticality(options.deps) }), options);
    await app.register(findingStreamRoutes, options);
  },
  jobs: (deps) => [auditJob(deps)],
  // Content is checked at start: a malformed rule file or catalog stops the service with its location.
  onStart: async () => {
    frameworks();
    builtinRules();
  },
};
