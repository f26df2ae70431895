// What other modules may use of the vulndb module (the lint rule in eslint.config.js lets them import
// only this file). The module itself (routes, jobs, schedules) is in module.ts, which only
// src/modules/index.ts imports: loading this API never loads the module's routes, nor the other
// modules those import.
export { createVulnMatcher } from './matching/matcher.js';
export type { PackageMatches, PackageQuery, VulnerabilityMatch, VulnMatcher } from './matching/matcher.js';
export { packageCoverage } from './matching/coverage.js';
export type { PackageCoverage } from './matching/coverage.js';
export { createKevLookup, reconcileKevSeverities } from './escalation.js';
export type { KevLookup, ReconcileResult } from './escalation.js';
export { createCveIntel, cveIntelRecords } from './cve-intel.js';
export { cveRiskFacts } from './cve-risk-facts.js';
export { matchingSourcesState } from './source-state.js';
export type { CveIntel, CveIntelRecord } from './cve-intel.js';
export { importLocation } from './import/importer.js';
export type { ImportOptions, ImportResult } from './import/importer.js';
export { runSync, runSeed, parseSourceSpecs } from './sync-job.js';
export { EPSS_THRESHOLD } from './service.js';
export { ecosystemInfo } from './matching/ecosystems.js';
export type { StoredRange } from './tables.js';
export { purlType, versRange } from './vers.js';
export {
  type AdvisoryDatabase,
  type AffectedFacts,
  type Rating,
  type VulnerabilityFacts,
  affectedEntries,
  databaseOf,
  distributionUrgency,
  nvdUrl,
  ratingsOf,
  urgencySeverity,
  vulnerabilityFacts,
} from './vulnerability-facts.js';
