import type { Module } from '../module.js';
import { apiKeyRoutes } from './api-key-routes.js';
import { auditRoutes } from './audit-routes.js';
import { authRoutes } from './auth-routes.js';
import { bootstrap } from './bootstrap.js';
import { invitationRoutes } from './invitation-routes.js';
import { mfaRoutes } from './mfa-routes.js';
import { sessionRoutes } from './session-routes.js';
import { tenantRoutes } from './tenant-routes.js';
import { userRoutes } from './user-routes.js';
import { workspaceRoutes } from './workspace-routes.js';
import './tables.js';

/** Identity and tenancy: login, tokens and the console's cookie session, tenants, workspaces, users, roles and invitations, API keys, audit log. */
export const tenancyModule: Module = {
  name: 'tenancy',
  routes: async (app, options) => {
    await app.register(authRoutes, options);
    await app.register(mfaRoutes, options);
    await app.register(sessionRoutes, options);
    await app.register(tenantRoutes, options);
    await app.register(workspaceRoutes, options);
    await app.register(userRoutes, options);
    await app.register(invitationRoutes, options);
    await app.register(apiKeyRoutes, options);
    await app.register(auditRoutes, options);
  },
  onStart: async (deps) => {
    await bootstrap(deps);
    // Loaded now, outside any transaction: on PGlite a transaction holds the only connection.
    await deps.tokenKey();
  },
};

/** The token response's schema (its type is TokenResponse). */
