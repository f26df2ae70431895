import * as client from 'openid-client';
import type { Clock } from '../../platform/clock.js';
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
 */
export class OidcClients {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly settings: SsoSettings,
    private readonly clock: Clock,
  ) {}

  /** Discovers (or reuses) the issuer's metadata and returns a configuration for the client. */
  async configuration(input: OidcClientInput, options: { fresh?: boolean } = {}): Promise<client.Configuration> {
    const { url, insecure } = checkIdpUrl(input.issuer, this.settings);
    const key = url.href;
    const now = this.clock.now().getTime();
    let cached = options.fresh ? undefined : this.cache.get(key);
    if (cached && now - cached.at > DISCOVERY_TTL_MS) cached = undefined;
    if (!cached) {
      // allowInsecureRequests only for what checkIdpUrl allows over http: loopback or allow-listed hosts.
      const discovered = await client.discovery(url, input.clientId, undefined, undefined, {
        execute: insecure ? [client.allowInsecureRequests] : [],
        timeout: TIMEOUT_SECONDS,
      });
      cached = { metadata: { ...discovered.serverMetadata() }, jwks: undefined, at: now };
      this.cache.set(key, cached);
    }
    return this.build(cached, input, insecure);
  }

  /** Keeps the JWKS the configuration fetched, for the next login. */
  remember(input: OidcClientInput, config: client.Configuration): void {
    const cached = this.cache.get(new URL(input.issuer).href);
    const jwks = client.getJwksCache(config);
    if (cached && jwks) cached.jwks = jwks;
  }

  private build(cached: Cached, input: OidcClientInput, insecure: boolean): client.Configuration {
    const skewSeconds = Math.round((this.clock.now().getTime() - Date.now()) / 1000);
    const methods = cached.metadata.token_endpoint_auth_methods_supported;
    // client_secret_basic is the OAuth default (and what most IdPs register clients with).
    const auth = !methods || methods.includes('client_secret_basic')
      ? client.ClientSecretBasic(input.clientSecret)
      : client.ClientSecretPost(input.clientSecret);
    const config = new client.Configuration(cached.metadata, input.clientId, { [client.clockSkew]: skewSeconds }, auth);
    config.timeout = TIMEOUT_SECONDS;
    if (insecure) client.allowInsecureRequests(config);
    // Verify the ID token's signature against the provider's JWKS too (not only TLS trust).
    client.enableNonRepudiationChecks(config);
    if (cached.jwks) client.setJwksCache(config, cached.jwks);
    return config;
  }
}

/** A readable reason for an openid-client failure, for the 401 message and the test report. */
export function describeOidcError(error: unknown): string {
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
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return true;
  return error instanceof TypeError && /fetch failed/i.test(error.message);
}
