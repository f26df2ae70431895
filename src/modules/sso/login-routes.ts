import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../module.js';
import type { Config } from '../../config.js';
import { setSessionCookies } from '../../platform/auth/session-cookies.js';
import { withErrors } from '../../platform/http/schemas.js';
import type { TokenResponse as TokenResponseType } from '../tenancy/index.js';
import { TokenResponseSchema as TokenResponse } from '../tenancy/index.js';
import type { OidcService } from './oidc-service.js';
import type { SamlService } from './saml-service.js';
import { AcsBody, LoginQuery, OidcCallbackQuery, Redirect, SloQuery, SloResult, SlugParams, type Landing } from './schemas.js';
import { tokenFragment } from './sign-in.js';

/** ACS bodies: a base64 SAML response, form-encoded. Anything larger is refused before parsing. */
const ACS_BODY_LIMIT = 1024 * 1024;

function rawQuery(request: FastifyRequest): string {
  const index = request.url.indexOf('?');
  return index < 0 ? '' : request.url.slice(index + 1);
}

function meta(request: FastifyRequest) {
  return { ip: request.ip, requestId: request.id };
}

/** The web console, served by this service at the root of its origin: a fixed relative path, never a URL from a request. */
const CONSOLE_PATH = '/';

interface SignedIn {
  tokens: TokenResponseType;
  redirectTo: string | null;
  landing: Landing | null;
}

/**
 * A login started with `?to=console` lands in the console: the session cookies, and a 303 to its
 * page with no token in the URL. Otherwise the token response as JSON, or a 303 to the tenant's
 * app URL with it in the fragment (never the query).
 */
function sendTokens(reply: FastifyReply, { tokens, redirectTo, landing }: SignedIn, lifetimes: Pick<Config, 'accessTokenTtlMs' | 'refreshTokenTtlMs'>) {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache').header('referrer-policy', 'no-referrer');
  if (landing === 'console') return setSessionCookies(reply, tokens, lifetimes).redirect(CONSOLE_PATH, 303);
  if (redirectTo) return reply.redirect(`${redirectTo}#${tokenFragment(tokens)}`, 303);
  return reply.status(200).send(tokens);
}

const LANDING_NOTE = 'With `?to=console` the login lands in the web console (docs/console.md, "Sign-in and sessions").';

const loginResponses = (success: Record<number, ReturnType<typeof Type.Null> | typeof TokenResponse>) => withErrors(success, [401, 404, 429, 503]);

/**
 * The public sign-in paths (no bearer token: the IdP's signature or the OIDC exchange is the
 * credential). Failures count against the client address in the login throttle (429 when locked).
 */
export function ssoLoginRoutes(oidc: OidcService, saml: SamlService): RoutePlugin {
  return async (app, { deps }) => {
    app.get(
      '/auth/oidc/:slug/login',
      {
        config: { public: true },
        schema: {
          operationId: 'oidcLogin',
          tags: ['sso'],
          summary: "Start an OIDC login: redirect to the tenant's identity provider",
          description: 'Authorization code flow with PKCE (S256), state and nonce; sets a short-lived cookie binding the login to this browser. ' + LANDING_NOTE,
          params: SlugParams,
          querystring: LoginQuery,
          response: loginResponses({ 302: Redirect }),
        },
      },
      async (request, reply) => {
        const redirect = await oidc.login(request.params.slug, request.protocol === 'https', meta(request), request.query.to ?? null);
        reply.header('set-cookie', redirect.setCookie).header('cache-control', 'no-store');
        return reply.redirect(redirect.location, 302);
      },
    );

    app.get(
      '/auth/oidc/:slug/callback',
      {
        config: { public: true },
        schema: {
          operationId: 'oidcCallback',
          tags: ['sso'],
          summary: "The IdP's redirect back: exchanges the code and signs the user in",
          description:
            'Validates state (one-time, bound to the browser), exchanges the code with the PKCE verifier and validates the ID token ' +
            '(signature, issuer, audience, nonce, expiry). Answers the token response, or 303 to the configured app URL with it in ' +
            "the fragment; a login started with `?to=console` sets the console's session cookies and answers 303 to `/`. " +
            'Register this path as the redirect URI at the IdP.',
          params: SlugParams,
          querystring: OidcCallbackQuery,
          response: loginResponses({ 200: TokenResponse, 303: Redirect }),
        },
      },
      async (request, reply) => {
        const result = await oidc.callback(request.params.slug, request.query, rawQuery(request), request.headers.cookie, meta(request));
        if (result.clearCookie) reply.header('set-cookie', result.clearCookie);
        return sendTokens(reply, result, deps.config);
      },
    );

    app.get(
      '/auth/saml/:slug/metadata',
      {
        config: { public: true },
        schema: {
          operationId: 'samlMetadata',
          tags: ['sso'],
          summary: 'Our SAML service-provider metadata (entity id, ACS, single log-out)',
          params: SlugParams,
          produces: ['application/samlmetadata+xml'],
          response: withErrors({ 200: Type.String({ description: 'SAML 2.0 metadata (an EntityDescriptor document)' }) }, [404]),
        },
      },
      async (request, reply) => reply.type('application/samlmetadata+xml; charset=utf-8').send(await saml.spMetadata(request.params.slug)),
    );

    app.get(
      '/auth/saml/:slug/login',
      {
        config: { public: true },
        schema: {
          operationId: 'samlLogin',
          tags: ['sso'],
          summary: 'Start a SAML login: redirect to the IdP with an AuthnRequest (HTTP-Redirect binding)',
          description: `${LANDING_NOTE} It travels as the RelayState \`console\`, which an IdP-initiated login may also send.`,
          params: SlugParams,
          querystring: LoginQuery,
          response: loginResponses({ 302: Redirect }),
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return reply.redirect(await saml.login(request.params.slug, meta(request), request.query.to ?? null), 302);
      },
    );

    app.get(
      '/auth/saml/:slug/slo',
      {
        config: { public: true },
        schema: {
          operationId: 'samlSingleLogout',
          tags: ['sso'],
          summary: "SAML single log-out: a signed LogoutRequest from the IdP revokes the user's sessions",
          description:
            'HTTP-Redirect binding, signed (SigAlg, Signature). Revokes every session of the user the request names, then redirects ' +
            'to the IdP with a LogoutResponse, or answers 200 when the IdP has no log-out endpoint.',
          params: SlugParams,
          querystring: SloQuery,
          response: withErrors({ 200: SloResult, 302: Redirect }, [401, 404, 429, 503]),
        },
      },
      async (request, reply) => {
        const result = await saml.slo(request.params.slug, request.query, rawQuery(request), meta(request));
        reply.header('cache-control', 'no-store');
        if (result.redirectTo) return reply.redirect(result.redirectTo, 302);
        return { logged_out: true, sessions_revoked: result.sessionsRevoked };
      },
    );

    // The ACS takes the HTTP-POST binding's form body: a parser for this context only, size-limited.
    await app.register(async (instance) => {
      const form = instance.withTypeProvider<TypeBoxTypeProvider>();
      form.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: ACS_BODY_LIMIT }, (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      form.post(
        '/auth/saml/:slug/acs',
        {
          config: { public: true },
          bodyLimit: ACS_BODY_LIMIT,
          schema: {
            operationId: 'samlAcs',
            tags: ['sso'],
            summary: 'SAML assertion consumer service: validates the response and signs the user in',
            description:
              'Checks the signature (IdP metadata certificates), audience, issuer, destination and recipient, the time window ' +
              '(NotBefore/NotOnOrAfter, 60 s clock skew), InResponseTo when present, and one-time use of the assertion id. ' +
              'Each refusal is a 401 naming the reason. Answers the token response, or 303 to the configured app URL; with the ' +
              "RelayState `console` it sets the console's session cookies and answers 303 to `/`.",
            consumes: ['application/x-www-form-urlencoded'],
            params: SlugParams,
            body: AcsBody,
            response: loginResponses({ 200: TokenResponse, 303: Redirect }),
          },
        },
        async (request, reply) => {
          const result = await saml.acs(request.params.slug, request.body, meta(request));
          return sendTokens(reply, result, deps.config);
        },
      );
    });
  };
}
