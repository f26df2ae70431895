import type { Module } from '../module.js';
import { consoleRoutes } from './routes.js';

/** The web console: the built single-page app in web/dist, served at `/` beside the API. */
export const consoleModule: Module = {
  name: 'console',
  rootRoutes: consoleRoutes,
};
