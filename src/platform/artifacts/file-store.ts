import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, access } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { assertSafeKey, type ArtifactInfo, type ArtifactStore, type PutOptions, type PutResult } from './store.js';
import { MeteringStream } from './metering.js';

const PARTIAL_SUFFIX = '.partial';

/**
 * Files under one root directory. Writes go to a temporary name and are renamed into place, so a
 * reader never sees half a file and a failed write leaves nothing behind. Content types are not kept:
 * callers record them in their own rows.
 */
export class FileArtifactStore implements ArtifactStore {
  readonly kind = 'file' as const;
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    assertSafeKey(key);
    return join(this.root, key);
  }

  /** The `.partial` files of writers that died mid-write (a killed worker): nothing renames them. */
  async sweepAbandoned(now: Date, olderThanMs: number): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.root, { recursive: true });
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      if (!name.endsWith(PARTIAL_SUFFIX)) continue;
      const path = join(this.root, name);
      const info = await stat(path).catch(() => null);
      // A live writer keeps touching its file; only one left alone for long is abandoned.
      if (!info || now.getTime() - info.mtimeMs < olderThanMs) continue;
      await rm(path, { force: true });
      removed++;
    }
    return removed;
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const temp = `${target}.${randomUUID()}${PARTIAL_SUFFIX}`;
    const meter = new MeteringStream(options.maxBytes);
    try {
      await pipeline(body, meter, createWriteStream(temp));
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return { key, size: meter.bytes, sha256: meter.digest() };
  }

  async get(key: string): Promise<Readable | null> {
    const path = this.path(key);
    try {
      await access(path);
    } catch {
      return null;
    }
    return createReadStream(path);
  }

  async stat(key: string): Promise<ArtifactInfo | null> {
    try {
      const info = await stat(this.path(key));
      return { key, size: info.size, contentType: null };
    } catch {
      return null;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async check(): Promise<boolean> {
    try {
      await mkdir(this.root, { recursive: true });
      return true;
    } catch {
      return false;
    }
  }
}
