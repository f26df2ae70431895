// What other modules may use of the agents module (the lint rule in eslint.config.js lets them import
// only this file). The module itself (routes, jobs, schedules) is in module.ts, which only
// src/modules/index.ts imports: loading this API never loads the module's routes, nor the other
// modules those import.
export { hostInventoryDates, hostPackages, hostReportSpan, type HostPackageInfo } from './host-software.js';
export { hostRules } from './host-rules.js';
export { ecosystemOf, familyOf, purlOf, type OsFacts } from './package-identity.js';
export { SBOM_CONTENT_TYPES, type SbomDocument, type SbomFormat, type SbomHost, SbomQuery, cycloneDx, organisationOf, sbomFacts, sbomFormat, spdx } from './sbom.js';
export type { StoredAdvisory } from './tables.js';
