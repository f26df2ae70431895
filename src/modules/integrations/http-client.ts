import { performance } from 'node:perf_hooks';
import { OutboundError, outboundFetch, type OutboundPolicy } from '../../platform/outbound/index.js';

/**
 * One outgoing HTTP request of a delivery attempt, through the platform's outbound guard (the target
 * is checked and the socket connects to the checked address): redirects are returned as they are
 * (never followed), the whole exchange has one deadline, and only the first bytes of the response
 * body are kept.
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
  policy: OutboundPolicy;
  bodyLimit: number;
}

/** Responses larger than this are cut off (the connection is dropped instead of read to the end). */
const MAX_READ = 256 * 1024;

export function createHttpClient(options: HttpClientOptions) {
  async function send(request: OutgoingRequest): Promise<HttpOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (error: string, refused = false): HttpOutcome => ({ status: null, headers: {}, body: '', latencyMs: elapsed(), error, refused });
    try {
      const response = await outboundFetch(options.policy, request.url, {
        method: request.method ?? 'POST',
        headers: request.headers,
        body: request.body,
        redirect: 'manual',
        timeoutMs: request.timeoutMs,
        signal: request.signal ?? null,
      });
      const chunks: Uint8Array[] = [];
      let size = 0;
      const reader = response.body?.getReader();
      if (reader) {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            if (size < options.bodyLimit) chunks.push(value);
            size += value.byteLength;
            if (size > MAX_READ) {
              await reader.cancel().catch(() => undefined);
              break;
            }
          }
        } catch {
          // A body that breaks off after the status: the status is what counts.
        }
      }
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        headers[name] = value;
      });
      return { status: response.status, headers, body: truncate(Buffer.concat(chunks), options.bodyLimit), latencyMs: elapsed(), error: null, refused: false };
    } catch (error) {
      if (error instanceof OutboundError) {
        if (error.failure === 'refused') return failed(`target refused: ${error.message}`, true);
        return failed(error.message);
      }
      if (request.signal?.aborted) return failed('aborted: the worker is stopping or lost the job');
      throw error;
    }
  }

  return { send };
}

export type HttpClient = ReturnType<typeof createHttpClient>;

/** The first `limit` bytes as UTF-8 text, without a broken character at the end. */
export function truncate(bytes: Buffer, limit: number): string {
  if (bytes.length <= limit) return bytes.toString('utf8');
  let end = limit;
  // Back off continuation bytes (10xxxxxx) so a multi-byte character is not split.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}…`;
}
