// What other modules may use of the applications module (the lint rule in eslint.config.js lets them import
// only this file). The module itself (routes, jobs, schedules) is in module.ts, which only
// src/modules/index.ts imports: loading this API never loads the module's routes, nor the other
// modules those import.
export { resourceCriticality, serviceCriticality } from './criticality.js';
export { assetGroupName, assetGroupNodeIds, assetGroupPredicate } from './asset-groups.js';
export { compileFilter } from './filter/sql.js';
