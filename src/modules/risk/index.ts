// What other modules may use of the risk module (the lint rule in eslint.config.js lets them import
// only this file). The module itself (routes, jobs, schedules) is in module.ts, which only
// src/modules/index.ts imports: loading this API never loads the module's routes, nor the other
// modules those import.
export { acceptancesExpiringBetween, acceptedAt, activeAt, hasLiveAcceptances } from './accepted.js';
