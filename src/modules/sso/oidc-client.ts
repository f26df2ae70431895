import * as client from 'openid-client';
import type { Clock } from '../../platform/clock.js';
import { OutboundError, openidFetch } from '../../platform/outbound/index.js';
import { checkIdpUrl, type SsoSettings } from './outbound.js';

/** Discovered provider metadata is reused this long before it is fetched again. */
const DISCOVERY_TTL_MS = 15 * 60_000;
const TIMEOUT_SECONDS = 10;

interface Cached {
  metadata: client.ServerMetadata;
  jwks: client.ExportedJWKSCache | undefined;
  at: number;
}

export interface OidcClientInput {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/**
 * openid-client configurations for the tenants' identity providers. Discovery results and JWKS are
 * cached per issuer; a Configuration is built per use so its clock follows the injected clock
 * (openid-client validates exp/iat/nbf against Date.now() plus `clockSkew`).
 *
 * Every request openid-client makes (discovery, JWKS, token, userinfo, …) goes through the outbound
 * policy as its customFetch, so an endpoint a discovery document names is checked like the issuer:
 * a token endpoint on 0.0.0.0 or a private address never receives the client secret. openid-client's
 * own https-only rule is switched off (allowInsecureRequests) because the policy decides the scheme:
 * http only to allow-listed hosts.
 */
export class OidcClients {
  private readonly cache = new Map<string, Cached>();
  private readonly fetch: ReturnType<typeof openidFetch>;

  constructor(
    private readonly settings: SsoSettings,
    private readonly clock: Clock,
  ) {
    this.fetch = openidFetch(settings.policy);
  }

  /** Discovers (or reuses) the issuer's metadata and returns a configuration for the client. */
  async configuration(input: OidcClientInput, options: { fresh?: boolean } = {}): Promise<client.Configuration> {
    const url = checkIdpUrl(input.issuer, this.settings);
    const key = url.href;
    const now = this.clock.now().getTime();
    let cached = options.fresh ? undefined : this.cache.get(key);
    if (cached && now - cached.at > DISCOVERY_TTL_MS) cached = undefined;
    if (!cached) {
      const discovered = await client.discovery(url, input.clientId, undefined, undefined, {
        execute: [client.allowInsecureRequests],
        [client.customFetch]: this.fetch,
        timeout: TIMEOUT_SECONDS,
      });
      cached = { metadata: { ...discovered.serverMetadata() }, jwks: undefined, at: now };
      this.cache.set(key, cached);
    }
    return this.build(cached, input);
  }

  /** Keeps the JWKS the configuration fetched, for the next login. */
  remember(input: OidcClientInput, config: client.Configuration): void {
    const cached = this.cache.get(new URL(input.issuer).href);
    const jwks = client.getJwksCache(config);
    if (cached && jwks) cached.jwks = jwks;
  }

  private build(cached: Cached, input: OidcClientInput): client.Configuration {
    const skewSeconds = Math.round((this.clock.now().getTime() - Date.now()) / 1000);
    const methods = cached.metadata.token_endpoint_auth_methods_supported;
    // client_secret_basic is the OAuth default (and what most IdPs register clients with).
    const auth = !methods || methods.includes('client_secret_basic') ? client.ClientSecretBasic(input.clientSecret) : client.ClientSecretPost(input.clientSecret);
    const config = new client.Configuration(cached.metadata, input.clientId, { [client.clockSkew]: skewSeconds }, auth);
    config.timeout = TIMEOUT_SECONDS;
    config[client.customFetch] = this.fetch;
    client.allowInsecureRequests(config);
    // Verify the ID token's signature against the provider's JWKS too (not only TLS trust).
    client.enableNonRepudiationChecks(config);
    if (cached.jwks) client.setJwksCache(config, cached.jwks);
    return config;
  }
}

/** The outbound policy's refusal or missing response behind an openid-client error, if that is what it is. */
function outboundCause(error: unknown): OutboundError | null {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof OutboundError) return e;
  }
  return null;
}

/** A readable reason for an openid-client failure, for the 401 message and the test report. */
export function describeOidcError(error: unknown): string {
  const outbound = outboundCause(error);
  if (outbound) return outbound.message;
  if (error instanceof client.WWWAuthenticateChallengeError) {
    const params = error.cause[0]?.parameters;
    return `${params?.error ?? 'refused'}${params?.error_description ? `: ${params.error_description}` : ''} (HTTP ${error.status})`;
  }
  if (error instanceof client.ResponseBodyError) {
    return `${error.error}${error.error_description ? `: ${error.error_description}` : ''} (HTTP ${error.status})`;
  }
  if (error instanceof client.AuthorizationResponseError) {
    return `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`;
  }
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? cause.message : typeof (cause as { code?: string })?.code === 'string' ? (cause as { code: string }).code : '';
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return `no answer within ${TIMEOUT_SECONDS} s`;
    return detail && !error.message.includes(detail) ? `${error.message}: ${detail}` : error.message;
  }
  return String(error);
}

/** The OAuth error code of a refused request (from the JSON body or a WWW-Authenticate challenge), if any. */
export function oauthErrorCode(error: unknown): string | null {
  if (error instanceof client.ResponseBodyError) return error.error;
  if (error instanceof client.WWWAuthenticateChallengeError) {
    const code = error.cause.find((challenge) => typeof challenge.parameters.error === 'string')?.parameters.error;
    return code ?? null;
  }
  return null;
}

/** Whether a failure is the provider being unreachable (503) rather than a refused login (401). */
export function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (outboundCause(error)) return true;
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return true;
  return error instanceof TypeError && /fetch failed/i.test(error.message);
}
