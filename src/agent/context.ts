import { execFile } from 'node:child_process';
import { constants, readFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { CollectionName, CollectorStatus } from './report-schema.js';

/**
 * What every collector gets: the host root (`/`, or where a container mounts the host), memoised
 * reads shared between collectors (the user table serves processes, users, sudo and files), and a
 * command runner that never throws for a missing binary.
 */
export interface CollectContext {
  /** Prefix of every host path: `/` normally. systemctl, iptables-save and nft only run when it is `/` (rpm gets --root). */
  root: string;
  now: Date;
  /** Extra paths to monitor (files, or directories walked to a depth of 4). */
  fimPaths: string[];
  /** Monitor the built-in list of sensitive files too. */
  defaultFim: boolean;
  /** True when the agent runs as root (uid 0). */
  privileged: boolean;
  path(p: string): string;
  memo<T>(key: string, load: () => Promise<T>): Promise<T>;
  readText(p: string): Promise<string | null>;
  run(command: string, args: string[], options?: { timeoutMs?: number }): Promise<CommandResult>;
  which(command: string): Promise<string | null>;
}

export interface CommandResult {
  ok: boolean;
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the command could not run at all (not found, timed out). */
  error: string | null;
}

/** A collector decided not to (or could not) collect: the report says so and why. */
export class Skip extends Error {
  override name = 'Skip';
  constructor(
    message: string,
    readonly status: Extract<CollectorStatus, 'skipped' | 'unsupported'> = 'skipped',
  ) {
    super(message);
  }
}

export interface CollectionResult<T> {
  items: T[];
  /** partial: collected, but some of it could not be read (reason says what). */
  status?: 'ok' | 'partial';
  reason?: string | null;
}

export type Collector<T = unknown> = (ctx: CollectContext) => Promise<CollectionResult<T>>;
export type CollectorTable = Partial<Record<CollectionName, Collector>>;

const SEARCH_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export function createContext(options: { root?: string; now?: Date; fimPaths?: string[]; defaultFim?: boolean }): CollectContext {
  const root = options.root ?? '/';
  const cache = new Map<string, Promise<unknown>>();
  const ctx: CollectContext = {
    root,
    now: options.now ?? new Date(),
    fimPaths: options.fimPaths ?? [],
    defaultFim: options.defaultFim ?? true,
    privileged: typeof process.getuid === 'function' && process.getuid() === 0,
    path: (p) => (root === '/' ? p : join(root, p)),
    memo<T>(key: string, load: () => Promise<T>): Promise<T> {
      let hit = cache.get(key) as Promise<T> | undefined;
      if (!hit) cache.set(key, (hit = load()));
      return hit;
    },
    // Read synchronously: the files collectors read (/proc, /etc, dpkg's status) are small and local,
    // and a promise per read cost more CPU than the read (issue 28's cycle budget).
    async readText(p) {
      try {
        return readFileSync(ctx.path(p), 'utf8');
      } catch {
        return null;
      }
    },
    run(command, args, runOptions = {}) {
      return new Promise((resolve) => {
        execFile(
          command,
          args,
          { timeout: runOptions.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, LC_ALL: 'C', SYSTEMD_PAGER: '', SYSTEMD_COLORS: '0' } },
          (error, stdout, stderr) => {
            const e = error as (NodeJS.ErrnoException & { killed?: boolean; code?: number | string }) | null;
            if (e && (e.code === 'ENOENT' || e.killed)) {
              resolve({ ok: false, code: null, stdout: String(stdout ?? ''), stderr: String(stderr ?? ''), error: e.killed ? 'timed out' : 'not found' });
              return;
            }
            resolve({ ok: !e, code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stdout: String(stdout ?? ''), stderr: String(stderr ?? ''), error: null });
          },
        );
      });
    },
    which(command) {
      return ctx.memo(`which:${command}`, async () => {
        const dirs = [...new Set([...(process.env.PATH ?? '').split(':').filter(Boolean), ...SEARCH_PATH])];
        for (const dir of dirs) {
          const candidate = join(dir, command);
          try {
            await access(candidate, constants.X_OK);
            return candidate;
          } catch {
            // not here
          }
        }
        return null;
      });
    },
  };
  return ctx;
}

/** First line of a command's error output, for a skip reason. */
export function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean)
      ?.slice(0, 300) ?? ''
  );
}
