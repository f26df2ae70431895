import { isIP } from 'node:net';
import type { Config } from '../../config.js';
import {
  checkOutboundTarget,
  checkOutboundUrl,
  derivePolicy,
  OutboundError,
  outboundFetch,
  outboundPolicyOf,
  readLimited,
  type OutboundLog,
  type OutboundPolicy,
} from '../../platform/outbound/index.js';

/**
 * Where the service may reach an identity provider: wherever the platform's outbound policy allows
 * (src/platform/outbound: https to public addresses; private addresses and plain http only for what
 * the operator lists in CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS). Issuer, metadata, JWKS, token and
 * userinfo requests all go through it, also the endpoints a discovery document names.
 */
export interface SsoSettings {
  policy: OutboundPolicy;
}

/** Read when the module's routes are registered (never at import time). */
export function loadSsoSettings(config: Pick<Config, 'outboundAllowHosts' | 'outboundLookup'>, version = '', log?: OutboundLog): SsoSettings {
  return { policy: derivePolicy(outboundPolicyOf(config), { userAgent: `ControlGraph-SSO${version ? `/${version}` : ''}`, log }) };
}

function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/** Thrown for a URL the policy refuses; the message names the problem for the admin. */
export class UrlPolicyError extends Error {
  override name = 'UrlPolicyError';
}

/**
 * A URL the service fetches (issuer, metadata URL): the outbound policy's rules that need no DNS.
 * The name's addresses are checked at every connection.
 */
export function checkIdpUrl(raw: string, settings: SsoSettings): URL {
  try {
    return checkOutboundUrl(settings.policy, raw);
  } catch (error) {
    if (error instanceof OutboundError) throw new UrlPolicyError(error.message);
    throw error;
  }
}

/**
 * Why the policy refuses a URL the service would fetch (a 400 when it is saved), or null when it may
 * be used: the rules above plus the addresses its name resolves to now. An https:// name that does
 * not resolve now passes (it is checked again at every connection).
 */
export async function fetchUrlProblem(raw: string, settings: SsoSettings): Promise<string | null> {
  try {
    await checkOutboundTarget(settings.policy, raw);
    return null;
  } catch (error) {
    if (error instanceof OutboundError) return error.message;
    throw error;
  }
}

/**
 * A URL only browsers visit (the service's own URL, the app redirect): never fetched by the service,
 * so not the outbound policy's business. https, or http on loopback and allow-listed hosts (a local
 * set-up); never credentials.
 */
export function idpUrlProblem(raw: string, settings: SsoSettings): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') {
    if (isLoopbackHost(url.hostname) || settings.policy.allowList.coversName(url.hostname)) return null;
    return 'must use https (plain http only for loopback or a host listed in CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS)';
  }
  return 'must be an https URL';
}

export class FetchProblem extends Error {
  override name = 'FetchProblem';
}

/**
 * GET a small document (IdP metadata, a JWKS) through the outbound policy, with a deadline and a
 * size cap, following at most three redirects (each checked). Messages never tell a closed port
 * from one that does not speak HTTP.
 */
export async function fetchLimited(raw: string, settings: SsoSettings, options: { maxBytes: number; timeoutMs: number; accept: string }): Promise<string> {
  try {
    const response = await outboundFetch(settings.policy, raw, { headers: { accept: options.accept }, timeoutMs: options.timeoutMs, maxRedirects: 3 });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new FetchProblem(`answered HTTP ${response.status}`);
    }
    return (await readLimited(response, options.maxBytes)).toString('utf8');
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    throw new FetchProblem(error.failure === 'too_large' ? error.message : `could not be fetched: ${error.message}`);
  }
}
