import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The local spool: every report is written here (gzip-compressed, exactly the bytes that go on the
 * wire) BEFORE it is sent, and removed only when the server has answered 200. A server outage, a
 * crash or a reboot therefore loses nothing: the next cycle sends the backlog, oldest first, so the
 * server's out-of-order rule (a report scanned before the last processed one is ignored) never
 * discards a spooled report.
 *
 * The spool is bounded (by count, bytes and age) so a long outage cannot fill the disk: past the bound
 * the OLDEST reports go, and the agent logs each one it drops. A report older than the age bound
 * would describe a host as it no longer is, and the server would take it only to supersede it. Reports the server refused as malformed
 * (400, 413) move to `rejected/` (the last few are kept for diagnosis) instead of blocking the queue.
 *
 * File names sort by scan time: `<scanned_at ms, 15 digits>-<scan_id>.json.gz`. Writes go to a
 * temporary name and are renamed, so a crash mid-write never leaves a half file under a real name.
 */

export interface SpoolLimits {
  maxReports: number;
  maxBytes: number;
  /** Reports scanned longer ago than this are dropped unsent. */
  maxAgeMs: number;
}

export const DEFAULT_SPOOL_LIMITS: SpoolLimits = { maxReports: 2_000, maxBytes: 256 * 1024 * 1024, maxAgeMs: 7 * 86_400_000 };
const KEEP_REJECTED = 20;
const NAME = /^(\d{15})-([A-Za-z0-9][A-Za-z0-9._-]*)\.json\.gz$/;

export interface SpoolEntry {
  name: string;
  path: string;
  scannedAt: Date;
  scanId: string;
  bytes: number;
}

export class Spool {
  readonly rejectedDir: string;

  constructor(
    readonly dir: string,
    readonly limits: SpoolLimits = DEFAULT_SPOOL_LIMITS,
  ) {
    this.rejectedDir = join(dir, 'rejected');
  }

  async init(): Promise<void> {
    await mkdir(this.rejectedDir, { recursive: true, mode: 0o700 });
    // Leftovers of a crash mid-write.
    for (const name of await readdir(this.dir)) if (name.endsWith('.tmp')) await rm(join(this.dir, name), { force: true });
  }

  static nameOf(scannedAt: Date, scanId: string): string {
    return `${String(scannedAt.getTime()).padStart(15, '0')}-${scanId}.json.gz`;
  }

  /** Stores a report; returns the entries dropped to stay within the limits (oldest first). */
  async put(scannedAt: Date, scanId: string, gz: Buffer): Promise<{ entry: SpoolEntry; dropped: SpoolEntry[] }> {
    const name = Spool.nameOf(scannedAt, scanId);
    const path = join(this.dir, name);
    await writeFile(`${path}.tmp`, gz, { mode: 0o600 });
    await rename(`${path}.tmp`, path);
    const entry = { name, path, scannedAt, scanId, bytes: gz.length };
    // Age is measured from the new report's scan time (this cycle's clock), so a spool carried over a
    // long outage is trimmed on the first cycle back, before its backlog is sent.
    return { entry, dropped: await this.enforce(name, scannedAt.getTime()) };
  }

  /** Spooled reports, oldest first. */
  async list(): Promise<SpoolEntry[]> {
    const out: SpoolEntry[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      const m = NAME.exec(name);
      if (!m) continue;
      try {
        const info = await stat(join(this.dir, name));
        out.push({ name, path: join(this.dir, name), scannedAt: new Date(Number(m[1])), scanId: m[2]!, bytes: info.size });
      } catch {
        // removed meanwhile
      }
    }
    return out;
  }

  read(entry: SpoolEntry): Promise<Buffer> {
    return readFile(entry.path);
  }

  async remove(entry: SpoolEntry): Promise<void> {
    await rm(entry.path, { force: true });
  }

  /** Moves a report the server refused out of the queue, keeping the last few for diagnosis. */
  async reject(entry: SpoolEntry, why: string): Promise<void> {
    await rename(entry.path, join(this.rejectedDir, entry.name)).catch(() => rm(entry.path, { force: true }));
    await writeFile(join(this.rejectedDir, `${entry.name}.reason.txt`), `${why}\n`, { mode: 0o600 });
    const kept = (await readdir(this.rejectedDir)).filter((n) => NAME.test(n)).sort();
    for (const old of kept.slice(0, Math.max(0, kept.length - KEEP_REJECTED))) {
      await rm(join(this.rejectedDir, old), { force: true });
      await rm(join(this.rejectedDir, `${old}.reason.txt`), { force: true });
    }
  }

  private async enforce(keep: string, now: number): Promise<SpoolEntry[]> {
    const entries = await this.list();
    let bytes = entries.reduce((sum, e) => sum + e.bytes, 0);
    let count = entries.length;
    const dropped: SpoolEntry[] = [];
    const oldest = now - this.limits.maxAgeMs;
    for (const e of entries) {
      const tooOld = e.scannedAt.getTime() < oldest;
      if (!tooOld && count <= this.limits.maxReports && bytes <= this.limits.maxBytes) break;
      if (e.name === keep) continue; // the newest report is never the one to go
      await this.remove(e);
      dropped.push(e);
      count--;
      bytes -= e.bytes;
    }
    return dropped;
  }
}
