// What other modules may use of the discovery module (the lint rule lets them import only this file).
export { findDiscoveryJob, repeatDiscoveryJob, whyNotRepeatable } from './rerun.js';
