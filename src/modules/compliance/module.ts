import type { Module } from '../module.js';
import { complianceRoutes } from './routes.js';
import { findingRoutes } from './findings/routes.js';
import { findingStreamRoutes } from './stream-routes.js';
import { unknownRoutes } from './unknowns/routes.js';
import { auditJob } from './audit/audit-job.js';
import { historyJob, historySchedule } from './history/history-job.js';
import { historyRoutes } from './history/routes.js';
import { readModelCheckRoutes } from './rollups/check-routes.js';
import { slaBreachJob, slaBreachSchedule } from './sla/sla-breach-job.js';
import { builtinRules } from './rule-catalog.js';
import { frameworks } from './frameworks.js';
import { provideResourceCriticality, type ResourceCriticality } from './findings/criticality-source.js';
import { provideCveRiskFacts, type CveRiskFacts } from './findings/cve-facts-source.js';

export interface ComplianceOptions {
  /** The business-service criticality of resources, a risk score input (the applications module's resourceCriticality). */
  resourceCriticality: ResourceCriticality;
  /** KEV membership and EPSS of CVEs, risk score inputs (the vulndb module's cveRiskFacts). */
  cveRiskFacts: CveRiskFacts;
}

/** Frameworks, rules, audits, findings, scores, remediation. */
export function createComplianceModule(options: ComplianceOptions): Module {
  provideResourceCriticality(options.resourceCriticality);
  provideCveRiskFacts(options.cveRiskFacts);
  return complianceModule;
}

const complianceModule: Module = {
  name: 'compliance',
  routes: async (app, options) => {
    await app.register(complianceRoutes, options);
    // The risk score is stored (findings/rescore.ts): its inputs' writers keep it.
    await app.register(findingRoutes(), options);
    await app.register(findingStreamRoutes, options);
    await app.register(unknownRoutes, options);
    await app.register(historyRoutes, options);
    await app.register(readModelCheckRoutes, options);
  },
  jobs: (deps) => [auditJob(deps), slaBreachJob(deps), historyJob(deps)],
  // finding.sla_breached events, by the application clock; history day points and thinning.
  schedules: () => [slaBreachSchedule, historySchedule()],
  // Content is checked at start: a malformed rule file or catalog stops the service with its location.
  onStart: async () => {
    frameworks();
    builtinRules();
  },
};
