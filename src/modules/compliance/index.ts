import type { Module } from '../module.js';
import { complianceRoutes } from './routes.js';
import { findingRoutes } from './findings/routes.js';
import { findingStreamRoutes } from './stream-routes.js';
import { unknownRoutes } from './unknowns/routes.js';
import { auditJob } from './audit/audit-job.js';
import { historyJob, historySchedule } from './history/history-job.js';
import { historyRoutes } from './history/routes.js';
import { readModelCheckRoutes } from './rollups/check-routes.js';
import { slaBreachJob, slaBreachSchedule } from './sla/sla-sweeper.js';
import { builtinRules } from './rule-catalog.js';
import { frameworks } from './frameworks.js';
import { provideResourceCriticality, type ResourceCriticality } from './findings/criticality-source.js';

export interface ComplianceOptions {
  /** The business-service criticality of resources, a risk score input (the applications module's resourceCriticality). */
  resourceCriticality: ResourceCriticality;
}

/** Frameworks, rules, audits, findings, scores, remediation. */
export function createComplianceModule(options: ComplianceOptions): Module {
  provideResourceCriticality(options.resourceCriticality);
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

export { provideResourceCriticality, type ResourceCriticality } from './findings/criticality-source.js';

// For other modules (the lint rule in eslint.config.js lets them import only this file).
export { requestAudit } from './audit/audit-service.js';
export { runAudit } from './audit/engine.js';
export { databaseAuditLock } from './audit/workspace-lock.js';
export { EXPIRING_SOON_DAYS, controlKey, findingsByControl } from './controls/control-state.js';
export { ATTESTATION_STATUSES, type AttestationStatus, type ControlCounts, type ControlStatusEntry, controlStatuses, countControls } from './controls/control-statuses.js';
export { activeFindingCounts, activeFindingsWhere } from './controls/finding-counts.js';
export { exposedResources } from './findings/exposure.js';
export { findingCreated, findingReopened, findingResolved, reopening, severityChanged } from './findings/finding-events.js';
export { type FindingText, storeFindingTexts, textIdOf } from './findings/finding-texts.js';
export { groupLabel } from './findings/grouped.js';
export { findingId, groupIdOf } from './findings/identity.js';
export { neighbourIds, rescoreAround, rescoreCveFindings, rescoreFindings } from './findings/rescore.js';
export { riskScore } from './findings/risk-score.js';
export { controlTitle, frameworks, isFrameworkId, requireFrameworkId, unknownFramework } from './frameworks.js';
export { type Rule, allRules, ruleControls } from './rule-catalog.js';
export { nodeTypeFromConfigType } from './rules/aws-node-type.js';
export { nistControlsOf, splitMappings } from './rules/primary-controls.js';
export { FINDING_TITLE_MAX, FRAMEWORKS, type FrameworkId, type FrameworkMapping, NIST_SOURCES, type NistControl, type NistSource, type Remediation, SEVERITIES, type Severity } from './rules/rule-types.js';
export { WHEN_MISSING, type WhenMissing } from './rules/when-missing.js';
export { enabledFrameworks } from './settings-service.js';
export { replaceResourceUnknowns } from './unknowns/record-resource.js';
export type { ResourceFilter } from './unknowns/unknown-controls.js';
