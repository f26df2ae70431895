import type { Readable } from 'node:stream';

export interface ArtifactInfo {
  key: string;
  size: number;
  contentType: string | null;
}

export interface PutResult {
  key: string;
  size: number;
  sha256: string;
}

export interface PutOptions {
  contentType?: string;
  /** Refuses (and removes what was written) once more bytes than this arrive. */
  maxBytes?: number;
}

/**
 * Where exports, evidence and reports live. Everything is a stream: no backend holds a whole file in
 * memory. Keys are relative paths such as `tenants/<id>/exports/<job>.png`.
 */
export interface ArtifactStore {
  readonly kind: 'file' | 's3';
  put(key: string, body: Readable, options?: PutOptions): Promise<PutResult>;
  /** The content, or null when no such artifact exists. */
  get(key: string): Promise<Readable | null>;
  stat(key: string): Promise<ArtifactInfo | null>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** A cheap reachability check for /api/v1/status. */
  check(): Promise<boolean>;
  /**
   * Removes what writers killed mid-upload left behind (not touched for `olderThanMs` before `now`);
   * returns how many. A write that fails inside the process cleans up after itself already.
   */
  sweepAbandoned(now: Date, olderThanMs: number): Promise<number>;
}

export class ArtifactTooLargeError extends Error {
  override name = 'ArtifactTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`artifact exceeds ${maxBytes} bytes`);
  }
}

/** Keys come from our own code, but a stray `..` must never leave the store's root. */
export function assertSafeKey(key: string): void {
  if (!/^[A-Za-z0-9._\-/]+$/.test(key) || key.split('/').some((part) => part === '..' || part === '') || key.startsWith('/')) {
    throw new Error(`invalid artifact key "${key}"`);
  }
}
