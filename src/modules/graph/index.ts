import type { Module } from '../module.js';
import { graphRoutes } from './routes.js';

/** The infrastructure graph: nodes and edges per tenant and workspace. */
export const graphModule: Module = {
  name: 'graph',
  routes: graphRoutes,
};

// For other modules (the lint rule in eslint.config.js lets them import only this file).
export { type EdgeRecord, upsertEdges } from './edge-repo.js';
export { type NodeRecord, getNode, upsertNodes } from './node-repo.js';
export { countNodes, internetNodeIds, nodeExists, nodeIdByNativeId } from './node-reads.js';
