import { isIP } from 'node:net';

/**
 * Where the service may reach an identity provider. HTTPS always; plain HTTP only for a loopback
 * host (an IdP on the same machine, as in tests and local set-ups) or a host the operator lists in
 * CONTROLGRAPH_SSO_ALLOW_INSECURE_HOSTS. Link-local addresses (cloud metadata endpoints) never.
 */
export interface SsoSettings {
  allowInsecureHosts: string[];
}

/**
 * Read when the module's routes are registered (never at import time). The shared Config type is
 * owned by the platform; this module's one setting is parsed here.
 */
export function loadSsoSettings(env: Record<string, string | undefined>): SsoSettings {
  return {
    allowInsecureHosts: (env.CONTROLGRAPH_SSO_ALLOW_INSECURE_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  };
}

function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(host);
  return false;
}

function isLinkLocal(hostname: string): boolean {
  const host = bareHost(hostname);
  if (isIP(host) === 4) return host.startsWith('169.254.') || host === '0.0.0.0';
  if (isIP(host) === 6) return /^fe[89ab][0-9a-f]?:/i.test(host) || host === '::' || /^::ffff:169\.254\./.test(host);
  return false;
}

/** Thrown for a URL the policy refuses; the message names the problem for the admin. */
export class UrlPolicyError extends Error {
  override name = 'UrlPolicyError';
}

/**
 * Checks an IdP URL (issuer, metadata URL) and tells whether it may be used over plain HTTP, which
 * openid-client refuses unless `allowInsecureRequests` is applied.
 */
export function checkIdpUrl(raw: string, settings: SsoSettings): { url: URL; insecure: boolean } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlPolicyError('is not an absolute URL');
  }
  if (url.username || url.password) throw new UrlPolicyError('must not contain credentials');
  if (isLinkLocal(url.hostname)) throw new UrlPolicyError('must not point to a link-local or unspecified address');
  if (url.protocol === 'https:') return { url, insecure: false };
  if (url.protocol === 'http:') {
    if (isLoopbackHost(url.hostname) || settings.allowInsecureHosts.includes(bareHost(url.hostname))) return { url, insecure: true };
    throw new UrlPolicyError('must use https (plain http only for loopback or a host listed in CONTROLGRAPH_SSO_ALLOW_INSECURE_HOSTS)');
  }
  throw new UrlPolicyError('must be an https URL');
}

/** Why the policy refuses an IdP URL (a 400, or a failed connection check), or null when it may be used. */
export function idpUrlProblem(raw: string, settings: SsoSettings): string | null {
  try {
    checkIdpUrl(raw, settings);
    return null;
  } catch (error) {
    if (error instanceof UrlPolicyError) return error.message;
    throw error;
  }
}

export class FetchProblem extends Error {
  override name = 'FetchProblem';
}

/**
 * GET a small document (IdP metadata) with a timeout and a size cap, following at most three
 * redirects, each checked against the same policy.
 */
export async function fetchLimited(
  raw: string,
  settings: SsoSettings,
  options: { maxBytes: number; timeoutMs: number; accept: string },
): Promise<string> {
  let current = raw;
  for (let hop = 0; hop <= 3; hop++) {
    const { url } = checkIdpUrl(current, settings);
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'GET',
        headers: { accept: options.accept },
        redirect: 'manual',
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${options.timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (error as Error).message);
      throw new FetchProblem(`could not be fetched: ${reason}`);
    }
    if (response.status >= 300 && response.status < 400 && response.headers.get('location')) {
      await response.body?.cancel();
      current = new URL(response.headers.get('location')!, url).href;
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new FetchProblem(`answered HTTP ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > options.maxBytes) {
      await response.body?.cancel();
      throw new FetchProblem(`is larger than ${options.maxBytes} bytes`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = response.body?.getReader();
    if (!reader) return '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > options.maxBytes) {
        await reader.cancel();
        throw new FetchProblem(`is larger than ${options.maxBytes} bytes`);
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
  throw new FetchProblem('redirected more than three times');
}
