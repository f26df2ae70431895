import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { withErrors } from '../../platform/http/schemas.js';
import { createAuthService } from './auth-service.js';
import { meOfContext } from './me.js';
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
        description:
          'An account with multi-factor sign-in also needs `otp`: without it a right password answers 401 `MFA_REQUIRED`, ' +
          'and a wrong, expired or replayed code 401 `MFA_INVALID` (counted as a failed guess: 429 after too many). ' +
          'A recovery code works once. When the tenant requires multi-factor sign-in and the user has no authenticator, ' +
          'the login succeeds with `mfa_enrollment_required: true`: the token then only serves enrollment (docs/console.md).',
        body: LoginBody,
        response: withErrors({ 200: TokenResponse }, [401, 429]),
      },
    },
    async (request) => auth.login(request.body.username, request.body.password, request.ip, request.id, request.body.otp),
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
      config: { duringMfaEnrollment: true },
      schema: { operationId: 'getMe', tags: ['auth'], summary: 'The current user or API key', response: withErrors({ 200: Me }, [401]) },
    },
    async (request) => meOfContext(contextOf(request)),
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
      config: { bodyless: true, duringMfaEnrollment: true },
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
