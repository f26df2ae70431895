import type { Module } from '../module.js';
import { graphRoutes } from './routes.js';

/** The infrastructure graph: nodes and edges per tenant and workspace. */
export const graphModule: Module = {
  name: 'graph',
  routes: graphRoutes,
};
