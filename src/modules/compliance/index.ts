// What other modules may use of the compliance module (the lint rule in eslint.config.js lets them import
// only this file). The module itself (routes, jobs, schedules) is in module.ts, which only
// src/modules/index.ts imports: loading this API never loads the module's routes, nor the other
// modules those import.
export { provideResourceCriticality, type ResourceCriticality } from './findings/criticality-source.js';
export { type CveRiskFacts, provideCveRiskFacts } from './findings/cve-facts-source.js';
export { requestAudit } from './audit/audit-service.js';
export { runAudit } from './audit/engine.js';
export { databaseAuditLock } from './audit/workspace-lock.js';
export { auditBaselines, lastSucceededAudit } from './audit/audit-run-reads.js';
export { controlKey, findingsByControl } from './controls/control-state.js';
export { EXPIRING_SOON_DAYS } from './controls/expiring-soon.js';
export { ATTESTATION_STATUSES, type AttestationStatus, type ControlCounts, type ControlStatusEntry, controlStatuses, countControls } from './controls/control-statuses.js';
export { type AttestationRecord, attestationRecords, controlsAttestedBy, saveAttestationRecord } from './controls/attestation-records.js';
export { activeFindingCounts, activeFindingsTable, activeFindingsWhere } from './controls/finding-counts.js';
export { exposedResources } from './findings/exposure.js';
export { findingCreated, findingReopened, findingResolved, reopening, severityChanged } from './findings/finding-events.js';
export { type FindingText, storeFindingTexts, textIdOf } from './findings/finding-texts.js';
export { groupLabel } from './findings/grouped.js';
export { findingId, groupIdOf } from './findings/identity.js';
export { type FindingColumn, type FindingFields, findingAlertFacts, findingsByIds, findingStatus, openFindingsTable, scopedFindings } from './findings/finding-lookup.js';
export {
  addCounts,
  canonical,
  type DesiredFinding,
  emptyCounts,
  type FindingOrigin,
  type HostResource,
  reportFindings,
  type SyncCounts,
  type SyncOptions,
  syncFindings,
} from './findings/sync-findings.js';
export { rescoreAround, rescoreCveFindings, rescoreFindings } from './findings/rescore.js';
export { type KevSeverityChange, reconcileKnownExploited } from './findings/kev-severity.js';
export { riskScore } from './findings/risk-score.js';
export { controlTitle, frameworks, isFrameworkId, requireFrameworkId, unknownFramework } from './frameworks.js';
export { type Rule, allRules, builtinRules, ruleControls } from './rule-catalog.js';
export { nodeTypeFromConfigType } from './rules/aws-node-type.js';
export { propertyModel } from './rules/property-paths.js';
export { nistControlsOf, splitMappings } from './rules/primary-controls.js';
export {
  CORE_FRAMEWORKS,
  FINDING_TITLE_MAX,
  FRAMEWORKS,
  PROWLER_FRAMEWORKS,
  type FrameworkId,
  type FrameworkMapping,
  NIST_SOURCES,
  type NistControl,
  type NistSource,
  type Remediation,
  SEVERITIES,
  type Severity,
} from './rules/rule-types.js';
export { WHEN_MISSING, type WhenMissing } from './rules/when-missing.js';
export { enabledFrameworks } from './settings-service.js';
export { replaceResourceUnknowns } from './unknowns/record-resource.js';
export { type UnknownSelection, unknownsByRule, unknownTotals } from './unknowns/unknown-summary.js';
export { suspensionReasons } from './rule-status.js';
export type { ResourceFilter } from './unknowns/unknown-controls.js';
export { type ImportedScope, resolveUnreported } from './findings/imported-scope.js';
