// What other modules may use of the tenancy module (the lint rule in eslint.config.js lets them import
// only this file). The module itself (routes, jobs, schedules) is in module.ts, which only
// src/modules/index.ts imports: loading this API never loads the module's routes, nor the other
// modules those import.
export { assertAddressNotLocked, assertNotLocked, recordAddressFailure, throttleKeys } from './login-throttle.js';
export { SLUG_PATTERN } from './slug.js';
export { subjectFor } from './subjects.js';
export { issueTokens, type TokenResponse } from './tokens.js';
export { TokenResponse as TokenResponseSchema } from './schemas.js';
