// What other modules may use of the graph module (the lint rule in eslint.config.js lets them import
// only this file). The module itself (routes, jobs, schedules) is in module.ts, which only
// src/modules/index.ts imports: loading this API never loads the module's routes, nor the other
// modules those import.
export { addEdgeUnlessPresent, type EdgeRecord, upsertEdges } from './edge-repo.js';
export { type NodeRecord, getNode, missingNodes, upsertNodes, writeNodeUnlessUnchanged } from './node-repo.js';
export {
  countNodes,
  countNodesMatching,
  countNodesOfTypes,
  internetNodeIds,
  nodeExists,
  nodeIdByNativeId,
  nodeIdsMatching,
  nodeNameByNativeId,
  nodePageMatching,
  nodeProperties,
  nodeProperty,
  type NodeRef,
  nodesByReference,
  nodeStates,
} from './node-reads.js';
export { edgePage, edgesAt, type EdgeEnd, edgesFrom, edgeTypesPresent, neighbourIds, neighboursOver, type NeighbourRow } from './edge-reads.js';
export { edgesInWorkspace, internetNodesInWorkspace, neighboursOfNodeN, nodeExistsInWorkspace, nodeOfRowExists, nodesAmong, nodesInScope, nodesInWorkspace } from './graph-sql.js';
