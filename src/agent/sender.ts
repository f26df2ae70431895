import type { Spool, SpoolEntry } from './spool.js';
import { sleep } from './sleep.js';

/**
 * Sends spooled reports to `POST /api/v1/agents/{agentID}/report` (gzip JSON), oldest first, with
 * retries. What an answer means for the report:
 *
 * - 200: delivered (also when the server ignored it as out of order or a duplicate): removed.
 * - network error, timeout, 408, 425, 429, 5xx: the server may take it later: retried with
 *   exponential backoff (Retry-After honoured), then left in the spool for the next cycle.
 * - 400, 413, 415, 422: this report will never be accepted: moved to the spool's rejected/ folder so
 *   it does not block the reports behind it.
 * - 401, 403, 404, 409 (wrong key, missing permission, wrong URL, agent id of another tenant): the
 *   configuration is wrong, and every report would get the same answer: sending stops, nothing is
 *   dropped, and the agent logs the server's message.
 */

export interface Target {
  /** Base URL of the ControlGraph service, e.g. https://controlgraph.example.com */
  server: string;
  apiKey: string;
  agentId: string;
  userAgent: string;
}

export type SendOutcome =
  | { kind: 'delivered'; status: number; body: Record<string, unknown> }
  | { kind: 'retry'; status: number | null; message: string; retryAfterMs: number | null }
  | { kind: 'rejected'; status: number; message: string }
  | { kind: 'fatal'; status: number; message: string };

/** The report URL; a base given with a trailing /api/v1 (or slash) is accepted too. */
export function reportUrl(server: string, agentId: string): string {
  const base = server
    .trim()
    .replace(/\/+$/, '')
    .replace(/\/api\/v1$/, '');
  return `${base}/api/v1/agents/${encodeURIComponent(agentId)}/report`;
}

/** Retry-After in seconds or as an HTTP date. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

async function errorMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { message?: string; details?: unknown } };
    if (body.error?.message) return `${res.status} ${body.error.message}`;
  } catch {
    // not the error envelope
  }
  return `${res.status} ${text.slice(0, 300) || res.statusText}`;
}

export async function postReport(target: Target, gz: Buffer, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<SendOutcome> {
  const signals = [AbortSignal.timeout(options.timeoutMs ?? 60_000), ...(options.signal ? [options.signal] : [])];
  let res: Response;
  try {
    res = await fetch(reportUrl(target.server, target.agentId), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${target.apiKey}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'user-agent': target.userAgent,
      },
      body: gz,
      signal: AbortSignal.any(signals),
    });
  } catch (error) {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    const why = e.name === 'TimeoutError' ? 'timed out' : (e.cause?.code ?? e.cause?.message ?? e.message);
    return { kind: 'retry', status: null, message: `cannot reach ${target.server}: ${why}`, retryAfterMs: null };
  }
  if (res.status === 200) return { kind: 'delivered', status: 200, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
  const message = await errorMessage(res);
  if (res.status === 408 || res.status === 425 || res.status === 429 || res.status >= 500) {
    return { kind: 'retry', status: res.status, message, retryAfterMs: retryAfterMs(res.headers.get('retry-after')) };
  }
  if ([401, 403, 404, 409].includes(res.status)) return { kind: 'fatal', status: res.status, message };
  return { kind: 'rejected', status: res.status, message };
}

export interface RetryPolicy {
  /** Further attempts per report after the first, within one flush. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 4, baseDelayMs: 2_000, maxDelayMs: 60_000 };

export function backoffMs(attempt: number, policy: RetryPolicy, retryAfter: number | null, random = Math.random): number {
  if (retryAfter !== null) return Math.min(retryAfter, policy.maxDelayMs);
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  // ±20 % jitter, so agents that lost the server together do not return in lockstep.
  return Math.round(exp * (0.8 + 0.4 * random()));
}

export interface FlushEvents {
  delivered?(entry: SpoolEntry, body: Record<string, unknown>): void;
  retrying?(entry: SpoolEntry, outcome: Extract<SendOutcome, { kind: 'retry' }>, delayMs: number): void;
  rejected?(entry: SpoolEntry, outcome: Extract<SendOutcome, { kind: 'rejected' }>): void;
}

export interface FlushResult {
  delivered: number;
  rejected: number;
  /** Reports still in the spool. */
  pending: number;
  /** Why sending stopped early, or null when the spool was emptied. */
  stopped: { kind: 'retry' | 'fatal'; status: number | null; message: string } | null;
}

/** Sends the spool's reports oldest first until it is empty or the server cannot take more. */
export async function flush(
  spool: Spool,
  target: Target,
  options: { policy?: RetryPolicy; timeoutMs?: number; signal?: AbortSignal; events?: FlushEvents } = {},
): Promise<FlushResult> {
  const policy = options.policy ?? DEFAULT_RETRY;
  const entries = await spool.list();
  const result: FlushResult = { delivered: 0, rejected: 0, pending: entries.length, stopped: null };
  for (const entry of entries) {
    let gz: Buffer;
    try {
      gz = await spool.read(entry);
    } catch {
      result.pending--; // removed by another agent process meanwhile
      continue;
    }
    for (let attempt = 0; ; attempt++) {
      if (options.signal?.aborted) {
        result.stopped = { kind: 'retry', status: null, message: 'the agent is stopping' };
        return result;
      }
      const outcome = await postReport(target, gz, { timeoutMs: options.timeoutMs, signal: options.signal });
      if (outcome.kind === 'delivered') {
        await spool.remove(entry);
        result.delivered++;
        result.pending--;
        options.events?.delivered?.(entry, outcome.body);
        break;
      }
      if (outcome.kind === 'rejected') {
        await spool.reject(entry, outcome.message);
        result.rejected++;
        result.pending--;
        options.events?.rejected?.(entry, outcome);
        break;
      }
      if (outcome.kind === 'fatal' || attempt >= policy.retries) {
        result.stopped = { kind: outcome.kind, status: outcome.status, message: outcome.message };
        return result;
      }
      const delay = backoffMs(attempt, policy, outcome.retryAfterMs);
      options.events?.retrying?.(entry, outcome, delay);
      await sleep(delay, options.signal);
    }
  }
  return result;
}
