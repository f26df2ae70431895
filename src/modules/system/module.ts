import type { Module } from '../module.js';
import { systemApiRoutes, systemRootRoutes } from './routes.js';

export const systemModule: Module = {
  name: 'system',
  rootRoutes: systemRootRoutes,
  routes: systemApiRoutes,
};
