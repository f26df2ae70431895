import { inTenant } from '../../platform/db/scope.js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as client from 'openid-client';
import type { AppDeps } from '../../deps.js';
import { unavailable } from '../../platform/http/errors.js';
import type { TokenResponse } from '../tenancy/index.js';
import { clientSecretOf } from './client-secret.js';
import { configBySlug } from './config-repo.js';
import { describeOidcError, isNetworkError, OidcClients } from './oidc-client.js';
import { UrlPolicyError, type SsoSettings } from './outbound.js';
import { refuseLogin, signInExternal, type RequestMeta } from './sign-in.js';
import { assertAddressNotLocked } from '../tenancy/index.js';
import { ssoUrls } from './urls.js';
import { LANDINGS, type Landing } from './schemas.js';
import type { SsoConfigRow } from './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'tokenKey' | 'log'>;

/** How long a started login may take to come back (the IdP's login and consent pages). */
export const LOGIN_STATE_TTL_MS = 10 * 60_000;
export const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
const COOKIE_PREFIX = 'cg_sso_';

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/** The cookie binding a login to the browser that started it; its name is derived from the state. */
export function loginCookieName(stateHash: string): string {
  return `${COOKIE_PREFIX}${stateHash.slice(0, 16)}`;
}

function readCookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return null;
}

function cookie(name: string, value: string, path: string, maxAgeSeconds: number, secure: boolean): string {
  return `${name}=${value}; Path=${path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

export interface LoginRedirect {
  location: string;
  setCookie: string;
}

export interface CallbackResult {
  tokens: TokenResponse;
  /** Set when the tenant configured an app URL: redirect there with the tokens in the fragment. */
  redirectTo: string | null;
  /** Where the login asked to land (`?to=` at its start); wins over redirectTo. */
  landing: Landing | null;
  clearCookie: string | null;
}

/**
 * The landing rides in the browser-binding cookie after the random part, so the stored hash covers
 * it: it cannot be changed between the start and the callback, and the callback reads only names
 * from the fixed list.
 */
function bindingValue(landing: Landing | null): string {
  const random = randomBytes(32).toString('base64url');
  return landing ? `${random}.${landing}` : random;
}

function landingOf(binding: string): Landing | null {
  const dot = binding.indexOf('.');
  const name = dot < 0 ? '' : binding.slice(dot + 1);
  return (LANDINGS as readonly string[]).includes(name) ? (name as Landing) : null;
}

/** OpenID Connect login: authorization code flow with PKCE (S256), state and nonce. */
export function createOidcService(deps: Deps, settings: SsoSettings, clients: OidcClients) {
  const db = deps.database.db;

  async function clientInput(config: SsoConfigRow) {
    const secret = await clientSecretOf(deps, config);
    if (!secret) throw unavailable('the SSO client secret cannot be decrypted (the service secret changed): a tenant admin must enter it again');
    return { issuer: config.issuer!, clientId: config.client_id!, clientSecret: secret };
  }

  async function providerConfiguration(config: SsoConfigRow) {
    const input = await clientInput(config);
    try {
      return { input, configuration: await clients.configuration(input) };
    } catch (error) {
      if (error instanceof UrlPolicyError) throw unavailable(`the configured issuer ${error.message}`);
      throw unavailable(`identity provider unavailable: ${describeOidcError(error)}`);
    }
  }

  return {
    /** Starts a login: stores state, nonce and PKCE verifier (one-time, 10 minutes) and redirects to the IdP. */
    async login(slug: string, secureRequest: boolean, meta: RequestMeta, landing: Landing | null = null): Promise<LoginRedirect> {
      // A locked address starts no logins either: each start stores a row until the sweeper runs.
      await assertAddressNotLocked(db, deps.clock, meta.ip);
      const { tenant, config } = await configBySlug(db, slug, 'oidc');
      const { configuration } = await providerConfiguration(config);
      const urls = ssoUrls(config.service_url, tenant.slug);
      const state = client.randomState();
      const nonce = client.randomNonce();
      const verifier = client.randomPKCECodeVerifier();
      const binding = bindingValue(landing);
      const now = deps.clock.now();
      const stateHash = sha256(state);
      await db
        .insertInto('sso_login_states')
        .values({
          state_hash: stateHash,
          tenant_id: tenant.id,
          browser_hash: sha256(binding),
          code_verifier: verifier,
          nonce,
          expires_at: new Date(now.getTime() + LOGIN_STATE_TTL_MS),
          created_at: now,
        })
        .execute();
      const location = client.buildAuthorizationUrl(configuration, {
        redirect_uri: urls.oidcCallback,
        response_type: 'code',
        scope: (config.scopes.length > 0 ? config.scopes : DEFAULT_SCOPES).join(' '),
        state,
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      const cookiePath = new URL(urls.oidcCallback).pathname;
      const secure = secureRequest || config.service_url.startsWith('https:');
      return { location: location.href, setCookie: cookie(loginCookieName(stateHash), binding, cookiePath, LOGIN_STATE_TTL_MS / 1000, secure) };
    },

    /**
     * The IdP's redirect back: the state is consumed (one-time) and must belong to this browser; the
     * code is exchanged and the ID token validated (signature, issuer, audience, nonce, expiry).
     */
    async callback(slug: string, query: Record<string, unknown>, rawQuery: string, cookies: string | undefined, meta: RequestMeta): Promise<CallbackResult> {
      await assertAddressNotLocked(db, deps.clock, meta.ip);
      const { tenant, config } = await configBySlug(db, slug, 'oidc');
      const refuse = (reason: string, count = true) => refuseLogin(deps, tenant.id, 'oidc', meta, reason, { count });
      const state = typeof query.state === 'string' ? query.state : null;
      if (!state) throw await refuse('the callback has no state parameter');
      const stateHash = sha256(state);
      const row = await db.deleteFrom('sso_login_states').where('state_hash', '=', stateHash).where(inTenant(tenant.id)).returningAll().executeTakeFirst();
      // An unknown state counts as a failure even when the IdP reports an error: otherwise forged
      // error callbacks would be free (each one writes an audit entry).
      if (!row) throw await refuse('unknown or already used login state: start the login again');
      if (typeof query.error === 'string') {
        const description = typeof query.error_description === 'string' ? `: ${query.error_description}` : '';
        throw await refuse(`the identity provider refused the login: ${query.error}${description}`, false);
      }
      const cookieName = loginCookieName(stateHash);
      const clearCookie = `${cookieName}=; Path=${new URL(ssoUrls(config.service_url, tenant.slug).oidcCallback).pathname}; Max-Age=0; HttpOnly; SameSite=Lax`;
      if (new Date(row.expires_at) <= deps.clock.now()) throw await refuse('login state expired: start the login again', false);
      const binding = readCookie(cookies, cookieName);
      const expected = Buffer.from(row.browser_hash);
      const given = Buffer.from(binding ? sha256(binding) : '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw await refuse('this login was not started in this browser (login cookie missing or different)');
      }

      const { input, configuration } = await providerConfiguration(config);
      const callbackUrl = new URL(ssoUrls(config.service_url, tenant.slug).oidcCallback);
      callbackUrl.search = rawQuery;
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
          pkceCodeVerifier: row.code_verifier,
          expectedState: state,
          expectedNonce: row.nonce,
          idTokenExpected: true,
        });
      } catch (error) {
        if (isNetworkError(error)) throw unavailable(`identity provider unavailable: ${describeOidcError(error)}`);
        throw await refuse(`OIDC login failed: ${describeOidcError(error)}`);
      }
      clients.remember(input, configuration);
      const claims = tokens.claims();
      if (!claims?.sub) throw await refuse('OIDC login failed: the ID token has no subject');
      let profile: Record<string, unknown> = { ...claims };
      if (!claims.email && configuration.serverMetadata().userinfo_endpoint) {
        // Many providers put e-mail and name only in userinfo; they are informational, so a failure is not fatal.
        try {
          profile = { ...(await client.fetchUserInfo(configuration, tokens.access_token, claims.sub)), ...claims };
        } catch (error) {
          deps.log.info({ tenantId: tenant.id, reason: describeOidcError(error) }, 'OIDC userinfo unavailable');
        }
      }
      const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value.slice(0, 320) : null);
      const result = await signInExternal(
        deps,
        tenant,
        config.default_role,
        {
          protocol: 'oidc',
          issuer: claims.iss,
          subject: claims.sub,
          email: text(profile.email),
          displayName: text(profile.name),
          preferredUsername: text(profile.preferred_username),
        },
        meta,
      );
      return { tokens: result, redirectTo: config.app_redirect_url, landing: landingOf(binding!), clearCookie };
    },
  };
}

export type OidcService = ReturnType<typeof createOidcService>;
