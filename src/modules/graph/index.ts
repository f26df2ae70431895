// What other modules may use of the graph module (the lint rule in eslint.config.js lets them import
// only this file). The module itself (routes, jobs, schedules) is in module.ts, which only
// src/modules/index.ts imports: loading this API never loads the module's routes, nor the other
// modules those import.
export { type EdgeRecord, upsertEdges } from './edge-repo.js';
export { type NodeRecord, getNode, missingNodes, upsertNodes } from './node-repo.js';
export { countNodes, internetNodeIds, nodeExists, nodeIdByNativeId, type NodeRef, nodesByReference, nodeStates } from './node-reads.js';
