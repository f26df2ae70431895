import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { TargetRefused, TargetUnresolvable, type TargetGuard } from './ssrf.js';

/**
 * One outgoing HTTP request of a delivery attempt: the target is checked by the SSRF guard, the socket
 * connects to the address the guard checked (a `lookup` that answers with it), redirects are returned
 * as they are (never followed), the whole exchange has one deadline, and only the first bytes of the
 * response body are kept.
 */
export interface OutgoingRequest {
  url: string;
  method?: 'POST' | 'PUT';
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface HttpOutcome {
  /** Null when no response came (refused, unresolvable, connection error, timeout). */
  status: number | null;
  headers: Record<string, string | string[] | undefined>;
  /** The first `bodyLimit` bytes of the response as text. */
  body: string;
  latencyMs: number;
  error: string | null;
  /** True when the guard refused the target (nothing was sent). */
  refused: boolean;
}

export interface HttpClientOptions {
  guard: TargetGuard;
  ca?: string[];
  userAgent: string;
  bodyLimit: number;
}

/** Responses larger than this are cut off (the connection is dropped instead of read to the end). */
const MAX_READ = 256 * 1024;

export function createHttpClient(options: HttpClientOptions) {
  // Keep-alive pools per process: a pooled socket stays connected to an address that was checked.
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64, ...(options.ca ? { ca: options.ca } : {}) });

  async function send(request: OutgoingRequest): Promise<HttpOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (error: string, refused = false): HttpOutcome => ({ status: null, headers: {}, body: '', latencyMs: elapsed(), error, refused });
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return failed('invalid URL', true);
    }
    let address: string;
    let family: 4 | 6;
    try {
      options.guard.checkUrl(url);
      ({ address, family } = await options.guard.resolve(url.hostname));
    } catch (error) {
      if (error instanceof TargetRefused) return failed(`target refused: ${error.message}`, true);
      if (error instanceof TargetUnresolvable) return failed(error.message);
      throw error;
    }
    const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
      if ((lookupOptions as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const body = Buffer.from(request.body, 'utf8');
    const secure = url.protocol === 'https:';
    const deadline = started + request.timeoutMs;
    const once = (fresh: boolean) =>
      new Promise<HttpOutcome & { staleSocket?: boolean }>((resolve) => {
        let settled = false;
        const finish = (outcome: HttpOutcome & { staleSocket?: boolean }) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          request.signal?.removeEventListener('abort', onAbort);
          resolve(outcome);
        };
        const req = (secure ? https : http).request({
          protocol: url.protocol,
          hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
          port: url.port || (secure ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          method: request.method ?? 'POST',
          // A retry after a stale pooled socket takes a new connection outside the pool.
          agent: fresh ? false : secure ? httpsAgent : httpAgent,
          lookup,
          ...(fresh && secure && options.ca ? { ca: options.ca } : {}),
          headers: {
            'user-agent': options.userAgent,
            'content-length': String(body.length),
            ...request.headers,
          },
        });
        const timer = setTimeout(() => {
          req.destroy(new Error(`timed out after ${Math.round(request.timeoutMs / 100) / 10} s`));
        }, Math.max(deadline - performance.now(), 1));
        const onAbort = () => req.destroy(new Error('aborted: the worker is stopping or lost the job'));
        request.signal?.addEventListener('abort', onAbort, { once: true });
        let responded = false;
        req.on('error', (error: NodeJS.ErrnoException) => {
          // A kept-alive socket the receiver closed while it sat in the pool fails at once, before any
          // response: the request never reached the receiver's application, so it is sent again once.
          const stale = !responded && req.reusedSocket && ['ECONNRESET', 'EPIPE', 'ECONNABORTED'].includes(error.code ?? '');
          finish({ ...failed(describeError(error)), staleSocket: stale });
        });
        req.on('response', (res) => {
          responded = true;
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            if (size < options.bodyLimit) chunks.push(chunk);
            size += chunk.length;
            if (size > MAX_READ) res.destroy();
          });
          const done = () =>
            finish({
              status: res.statusCode ?? null,
              headers: res.headers,
              body: truncate(Buffer.concat(chunks), options.bodyLimit),
              latencyMs: elapsed(),
              error: null,
              refused: false,
            });
          res.on('end', done);
          res.on('close', done);
          res.on('error', done);
        });
        req.end(body);
      });
    const first = await once(false);
    if (!first.staleSocket || request.signal?.aborted) return withoutFlag(first);
    return withoutFlag(await once(true));
  }

  return {
    send,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

export type HttpClient = ReturnType<typeof createHttpClient>;

function withoutFlag(outcome: HttpOutcome & { staleSocket?: boolean }): HttpOutcome {
  const { staleSocket: _stale, ...rest } = outcome;
  return rest;
}

function describeError(error: NodeJS.ErrnoException): string {
  const code = error.code && !error.message.includes(error.code) ? ` (${error.code})` : '';
  return `${error.message}${code}`;
}

/** The first `limit` bytes as UTF-8 text, without a broken character at the end. */
export function truncate(bytes: Buffer, limit: number): string {
  if (bytes.length <= limit) return bytes.toString('utf8');
  let end = limit;
  // Back off continuation bytes (10xxxxxx) so a multi-byte character is not split.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}…`;
}
