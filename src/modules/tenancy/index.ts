import type { Module } from '../module.js';
import { apiKeyRoutes } from './api-key-routes.js';
import { auditRoutes } from './audit-routes.js';
import { authRoutes } from './auth-routes.js';
import { bootstrap } from './bootstrap.js';
import { tenantRoutes } from './tenant-routes.js';
import { userRoutes } from './user-routes.js';
import { workspaceRoutes } from './workspace-routes.js';

/** Identity and tenancy: login and tokens, tenants, workspaces, users and roles, API keys, audit log. */
export const tenancyModule: Module = {
  name: 'tenancy',
  routes: async (app, options) => {
    await app.register(authRoutes, options);
    await app.register(tenantRoutes, options);
    await app.register(workspaceRoutes, options);
    await app.register(userRoutes, options);
    await app.register(apiKeyRoutes, options);
    await app.register(auditRoutes, options);
  },
  onStart: async (deps) => {
    await bootstrap(deps);
    // Loaded now, outside any transaction: on PGlite a transaction holds the only connection.
    await deps.tokenKey();
  },
};
