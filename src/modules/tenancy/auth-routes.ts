import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { withErrors } from '../../platform/http/schemas.js';
import { createAuthService } from './auth-service.js';
import { LoginBody, Me, RefreshBody, SelectTenantBody, SwitchWorkspaceBody, TokenResponse } from './schemas.js';

/** Login, refresh, the current user, tenant and workspace switching, logout. */
export const authRoutes: RoutePlugin = async (app, { deps }) => {
  const auth = createAuthService(deps);

  app.post(
    '/auth/token',
    {
      config: { public: true },
      schema: {
        operationId: 'login',
        tags: ['auth'],
        summary: "Log in with username and password (into the user's first tenant)",
        body: LoginBody,
        response: withErrors({ 200: TokenResponse }, [401, 429]),
      },
    },
    async (request) => auth.login(request.body.username, request.body.password, request.ip, request.id),
  );

  app.post(
    '/auth/refresh',
    {
      config: { public: true },
      schema: {
        operationId: 'refreshToken',
        tags: ['auth'],
        summary: 'Exchange a refresh token (single use) for a new token pair',
        description: 'Reusing a spent refresh token revokes its whole session (all its refresh and access tokens).',
        body: RefreshBody,
        response: withErrors({ 200: TokenResponse }, [401]),
      },
    },
    async (request) => auth.refresh(request.body.refresh_token, request.ip, request.id),
  );

  app.get(
    '/auth/me',
    {
      schema: { operationId: 'getMe', tags: ['auth'], summary: 'The current user or API key', response: withErrors({ 200: Me }, [401]) },
    },
    async (request) => {
      const { actor, scope } = contextOf(request);
      return {
        auth_type: actor.type === 'user' ? ('jwt' as const) : ('api_key' as const),
        user_id: actor.userId,
        username: actor.type === 'user' ? actor.name : null,
        api_key_id: actor.type === 'api_key' ? actor.id : null,
        account_id: actor.accountId,
        tenant_id: scope.tenantId,
        workspace_id: scope.workspaceId,
        role: actor.role,
        permissions: [...actor.permissions].sort(),
        is_system_admin: actor.isSystemAdmin,
        expires_at: actor.tokenExpiresAt,
      };
    },
  );

  app.post(
    '/auth/select-tenant',
    {
      schema: {
        operationId: 'selectTenant',
        tags: ['auth'],
        summary: 'A token for another tenant the user belongs to',
        body: SelectTenantBody,
        response: withErrors({ 200: TokenResponse }, [401, 403]),
      },
    },
    async (request) => auth.selectTenant(contextOf(request), request.body.tenant_id),
  );

  app.post(
    '/auth/switch-workspace',
    {
      schema: {
        operationId: 'switchWorkspace',
        tags: ['auth'],
        summary: 'A token bound to another workspace of the current tenant',
        body: SwitchWorkspaceBody,
        response: withErrors({ 200: TokenResponse }, [401, 404]),
      },
    },
    async (request) => auth.switchWorkspace(contextOf(request), request.body.workspace_id),
  );

  app.post(
    '/auth/logout',
    {
      config: { bodyless: true },
      schema: {
        operationId: 'logout',
        tags: ['auth'],
        summary: 'Revoke the access token and its refresh chain',
        response: withErrors({ 204: Type.Null() }, [401]),
      },
    },
    async (request, reply) => {
      await auth.logout(contextOf(request));
      return reply.status(204).send();
    },
  );
};
