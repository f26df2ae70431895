import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { clearSessionCookies, CSRF_HEADER, REFRESH_COOKIE, sessionCookiesOf, setSessionCookies } from '../../platform/auth/session-cookies.js';
import { AppError, unauthorized } from '../../platform/http/errors.js';
import { withErrors } from '../../platform/http/schemas.js';
import { createAuthService } from './auth-service.js';
import { meOfTokens } from './me.js';
import { LoginBody, Me, SelectTenantBody, SwitchWorkspaceBody } from './schemas.js';
import { createSessionService } from './session-service.js';

const CSRF_NOTE = `Send the header \`${CSRF_HEADER}: 1\` (403 \`CSRF_REQUIRED\` without it).`;
const COOKIES_NOTE =
  'Sets the HttpOnly, SameSite=Strict cookies `cg_session` (the access token, Path=/) and `cg_refresh` (the refresh token, ' +
  'Path=/api/v1/auth/session), Secure over https; answers the `GET /auth/me` body, never a token.';

/**
 * The web console's session (docs/console.md): the token endpoints' logins, refresh and switches,
 * with the tokens in HttpOnly cookies instead of the body. The services are the token endpoints'
 * own, so throttling, multi-factor checks, rotation, reuse detection and audit entries are theirs.
 */
export const sessionRoutes: RoutePlugin = async (app, { deps }) => {
  const auth = createAuthService(deps);
  const sessions = createSessionService(deps);

  // Every answer of these routes carries or clears a credential, refusals included: never cached.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  app.post(
    '/auth/session',
    {
      config: { public: true, csrf: true },
      schema: {
        operationId: 'createSession',
        tags: ['auth'],
        summary: 'Sign the console in: log in with username and password into a cookie session',
        description: `The same login as \`POST /auth/token\` (same body with \`otp\` for multi-factor sign-in, same throttle and answers to failures). ${COOKIES_NOTE} ${CSRF_NOTE}`,
        body: LoginBody,
        response: withErrors({ 200: Me }, [401, 403, 429]),
      },
    },
    async (request, reply) => {
      const tokens = await auth.login(request.body.username, request.body.password, request.ip, request.id, request.body.otp);
      setSessionCookies(reply, tokens, deps.config);
      return meOfTokens(tokens);
    },
  );

  app.post(
    '/auth/session/refresh',
    {
      config: { public: true, csrf: true, bodyless: true },
      schema: {
        operationId: 'refreshSession',
        tags: ['auth'],
        summary: 'Renew the cookie session with its refresh cookie (single use)',
        description:
          `Rotates like \`POST /auth/refresh\`, with the refresh token of the \`${REFRESH_COOKIE}\` cookie: reusing a spent one revokes ` +
          `the whole session. ${COOKIES_NOTE} A 401 (no, expired or revoked refresh cookie) clears both cookies. ${CSRF_NOTE}`,
        response: withErrors({ 200: Me }, [401, 403]),
      },
    },
    async (request, reply) => {
      const { refresh } = sessionCookiesOf(request);
      try {
        if (!refresh) throw unauthorized('no session to refresh: sign in again');
        const tokens = await auth.refresh(refresh, request.ip, request.id);
        setSessionCookies(reply, tokens, deps.config);
        return meOfTokens(tokens);
      } catch (error) {
        // The cookies can no longer serve: the console starts again from the sign-in page.
        if (error instanceof AppError && error.status === 401) clearSessionCookies(reply);
        throw error;
      }
    },
  );

  app.delete(
    '/auth/session',
    {
      config: { public: true, csrf: true },
      schema: {
        operationId: 'deleteSession',
        tags: ['auth'],
        summary: 'Sign the console out: revoke the cookie session and clear its cookies',
        description:
          'Revokes like `POST /auth/logout` what the cookies prove: the access token and its session, or, when the access cookie ' +
          `has expired, the session of a still valid refresh cookie. Clears both cookies and answers 204 in every case. ${CSRF_NOTE}`,
        response: withErrors({ 204: Type.Null() }, [403]),
      },
    },
    async (request, reply) => {
      await sessions.end(sessionCookiesOf(request), { ip: request.ip, requestId: request.id });
      clearSessionCookies(reply);
      return reply.status(204).send();
    },
  );

  app.post(
    '/auth/session/tenant',
    {
      schema: {
        operationId: 'selectSessionTenant',
        tags: ['auth'],
        summary: 'Move the cookie session to another tenant the user belongs to',
        description: `Like \`POST /auth/select-tenant\` (its default workspace), but replaces the session cookies. ${COOKIES_NOTE} ${CSRF_NOTE}`,
        body: SelectTenantBody,
        response: withErrors({ 200: Me }, [401, 403]),
      },
    },
    async (request, reply) => {
      const tokens = await auth.selectTenant(contextOf(request), request.body.tenant_id);
      setSessionCookies(reply, tokens, deps.config);
      return meOfTokens(tokens);
    },
  );

  app.post(
    '/auth/session/workspace',
    {
      schema: {
        operationId: 'switchSessionWorkspace',
        tags: ['auth'],
        summary: 'Move the cookie session to another workspace of the current tenant',
        description: `Like \`POST /auth/switch-workspace\`, but replaces the session cookies. ${COOKIES_NOTE} ${CSRF_NOTE}`,
        body: SwitchWorkspaceBody,
        response: withErrors({ 200: Me }, [401, 403, 404]),
      },
    },
    async (request, reply) => {
      const tokens = await auth.switchWorkspace(contextOf(request), request.body.workspace_id);
      setSessionCookies(reply, tokens, deps.config);
      return meOfTokens(tokens);
    },
  );
};
