import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import type { Clock } from '../clock.js';
import type { JobRow } from './queue.js';

export interface JobContext {
  job: JobRow;
  /** Aborted when the job is cancelled, its lease is lost, or the worker shuts down. */
  signal: AbortSignal;
  db: Kysely<Database>;
  clock: Clock;
  log: Logger;
  /** Extends the lease now (the worker also renews it on a timer while the handler runs). */
  heartbeat(): Promise<void>;
}

export interface JobDefinition<P = Record<string, unknown>> {
  kind: string;
  /** Attempts before the job fails for good (also when a worker dies holding it). Default 3. */
  maxAttempts?: number;
  /** How long a claim lasts without a heartbeat before another worker may take the job over. */
  leaseMs?: number;
  /** Delay before retrying after a failed attempt (attempt counts from 1). */
  backoffMs?: (attempt: number) => number;
  run(payload: P, ctx: JobContext): Promise<unknown>;
  /**
   * Called once, in the transaction that marks the job failed for good (handler errors after the last
   * attempt, or a lease that expired on the last attempt): domain tables record the failure here.
   */
  onFailed?(job: JobRow, error: string, trx: Kysely<Database>): Promise<void>;
  /** Called in the transaction that marks the job succeeded, with the handler's result. */
  onSucceeded?(job: JobRow, result: unknown, trx: Kysely<Database>): Promise<void>;
}

/** Thrown by a handler for a failure that retrying cannot fix. */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

export const DEFAULT_LEASE_MS = 60_000;

/** Exponential backoff: 1 s, 4 s, 16 s, … capped at 10 minutes. */
export function defaultBackoffMs(attempt: number): number {
  return Math.min(1_000 * 4 ** (attempt - 1), 600_000);
}
