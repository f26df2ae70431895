import { Agent, buildConnector, fetch as undiciFetch, Headers, type HeadersInit, type Response } from 'undici';
import { checkOutboundUrl, OutboundError, resolveOutbound, type OutboundPolicy } from './policy.js';

/**
 * HTTP on a tenant's behalf. Every connection is made by a connector that resolves the host once
 * through the policy, checks every address, and connects the socket to the checked address (TLS
 * still verifies the certificate against the host name). No second resolution happens between check
 * and connect, so a DNS answer that changes (DNS rebinding) cannot reach a refused address. Pooled
 * keep-alive connections were checked when they were opened. Redirects are followed here, each one
 * checked like the first URL.
 */
export interface OutboundInit {
  method?: string;
  headers?: HeadersInit;
  body?: string | Uint8Array | URLSearchParams | null;
  /** 'follow' (default: up to the policy's maxRedirects, each checked), 'manual' (3xx returned as is), 'error'. */
  redirect?: 'follow' | 'manual' | 'error';
  /** Deadline of the whole exchange including reading the body; the policy's default when absent, 0 for none. */
  timeoutMs?: number;
  maxRedirects?: number;
  /** The caller's cancellation (a job's signal); its reason is thrown as it is. */
  signal?: AbortSignal | null;
}

const agents = new WeakMap<OutboundPolicy, Agent>();

/** The connection pool of a policy: one Agent whose connector applies the policy to every socket. */
export function outboundAgent(policy: OutboundPolicy): Agent {
  let agent = agents.get(policy);
  if (!agent) {
    const base = buildConnector({ ...(policy.ca ? { ca: policy.ca } : {}), timeout: Math.min(policy.timeoutMs || 10_000, 10_000) });
    const connect: buildConnector.connector = (options, callback) => {
      resolveOutbound(policy, options.hostname, options.protocol).then(
        // `host` stays the original name: undici derives the TLS server name (SNI, certificate check) from it.
        (target) => base({ ...options, hostname: target.address }, callback),
        (error: Error) => callback(error, null),
      );
    };
    // undici's own header and body idle timeouts (5 min) stay: the caller's deadline (timeoutMs) is the real one.
    agent = new Agent({ connect });
    agents.set(policy, agent);
  }
  return agent;
}

/** Closes the policy's pooled connections (at shutdown). */
export async function closeOutbound(policy: OutboundPolicy): Promise<void> {
  const agent = agents.get(policy);
  agents.delete(policy);
  await agent?.close();
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A fetch that only reaches what the policy allows; throws OutboundError (or the caller's abort reason). */
export async function outboundFetch(policy: OutboundPolicy, input: string | URL, init: OutboundInit = {}): Promise<Response> {
  const timeoutMs = init.timeoutMs ?? policy.timeoutMs;
  const signals = [init.signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : null].filter((s): s is AbortSignal => Boolean(s));
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  const headers = new Headers(init.headers);
  if (!headers.has('user-agent')) headers.set('user-agent', policy.userAgent);
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body ?? null;
  const maxRedirects = init.maxRedirects ?? policy.maxRedirects;
  let current = typeof input === 'string' ? input : input.href;
  for (let hop = 0; ; hop++) {
    const url = checkOutboundUrl(policy, current);
    let response: Response;
    try {
      response = await undiciFetch(url, { method, headers, body, redirect: 'manual', signal, dispatcher: outboundAgent(policy) });
    } catch (error) {
      const failure = failureOf(error, init.signal, timeoutMs);
      if (failure instanceof OutboundError && failure.detail) {
        policy.log?.info({ target: url.origin, failure: failure.failure, detail: failure.detail }, 'outbound request failed');
      }
      throw failure;
    }
    const location = response.headers.get('location');
    if (init.redirect === 'manual' || !REDIRECTS.has(response.status) || !location) return response;
    await response.body?.cancel().catch(() => undefined);
    if (init.redirect === 'error') throw new OutboundError('redirects', `redirected (HTTP ${response.status}), which is not allowed here`);
    if (hop >= maxRedirects) throw new OutboundError('redirects', `redirected more than ${maxRedirects} times`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new OutboundError('redirects', 'redirected to an invalid URL');
    }
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = null;
      headers.delete('content-type');
    }
    // Credentials meant for one origin are not handed to another.
    if (next.origin !== url.origin) for (const name of ['authorization', 'cookie', 'proxy-authorization']) headers.delete(name);
    current = next.href;
  }
}

/** The tenant-facing failure of a fetch; the connection's own error stays in `detail`. */
function failureOf(error: unknown, callerSignal: AbortSignal | null | undefined, timeoutMs: number): unknown {
  if (callerSignal?.aborted) return callerSignal.reason ?? error;
  if (error instanceof OutboundError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof OutboundError) return cause;
  const detail = cause instanceof Error ? `${(cause as NodeJS.ErrnoException).code ?? cause.name}: ${cause.message}` : (error as Error).message;
  return noResponse(timeoutMs, detail);
}

/**
 * One message for every way a connection can fail (refused, reset, not HTTP, TLS, silent): telling
 * them apart would let a tenant map which ports are open.
 */
export function noResponse(timeoutMs: number, detail?: string): OutboundError {
  return new OutboundError('no_response', timeoutMs > 0 ? `no HTTP response within ${formatSeconds(timeoutMs)} s` : 'no HTTP response', detail);
}

const formatSeconds = (ms: number) => String(Math.round(ms / 100) / 10);

/**
 * Reads a response body, refusing more than `maxBytes` (declared or read). A body that breaks off
 * reads as no response, like a failed connection.
 */
export async function readLimited(response: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new OutboundError('too_large', `is larger than ${maxBytes} bytes`);
  }
  const reader = response.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new OutboundError('too_large', `is larger than ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof OutboundError) throw error;
    throw new OutboundError('no_response', 'the response broke off', (error as Error).message);
  }
  return Buffer.concat(chunks);
}

/**
 * openid-client's `[client.customFetch]`: every request it makes (discovery, JWKS, token, userinfo,
 * …) goes through the policy. openid-client asks for manual redirects and passes its own timeout
 * signal; when that fires it reads as any other missing response.
 */
export function openidFetch(policy: OutboundPolicy) {
  return async (url: string, options: { method?: string; headers?: Record<string, string>; body?: unknown; signal?: AbortSignal }): Promise<globalThis.Response> => {
    try {
      const response = await outboundFetch(policy, url, {
        method: options.method,
        headers: options.headers,
        body: options.body as OutboundInit['body'],
        redirect: 'manual',
        signal: options.signal ?? null,
      });
      return response as unknown as globalThis.Response;
    } catch (error) {
      if (error instanceof OutboundError) throw error;
      throw noResponse(policy.timeoutMs, (error as Error).message);
    }
  };
}
