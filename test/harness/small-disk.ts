import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A directory on a file system of its own with a small, real size limit, for tests that fill a disk:
 * writes beyond it fail with ENOSPC, as on a full volume. Two ways, tried in order:
 *
 * - a tmpfs mounted on the directory (needs root, as on the CI machine);
 * - without privileges, a tmpfs mounted inside a new user and mount namespace (`unshare -Urm`) by a
 *   small process that keeps the namespace alive; this process reaches the mount through that
 *   process's view of the file system, /proc/<pid>/root/<directory>.
 *
 * CONTROLGRAPH_TEST_SMALL_DISK=namespace skips the first (to exercise the second as root).
 */
export interface SmallDisk {
  /** Where to read and write: a path of the small file system. */
  path: string;
  how: 'tmpfs' | 'tmpfs in a user namespace';
  release(): Promise<void>;
}

/** The small file system, or why none could be made here. */
export async function smallDisk(size = '1m'): Promise<SmallDisk | { unavailable: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'cg-full-'));
  const reasons: string[] = [];
  if (process.env.CONTROLGRAPH_TEST_SMALL_DISK !== 'namespace') {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
      return {
        path: dir,
        how: 'tmpfs',
        async release() {
          execFileSync('umount', [dir], { stdio: 'pipe' });
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      reasons.push(`mount -t tmpfs: ${firstLine(error)}`);
    }
  }
  const namespaced = await tmpfsInNamespace(dir, size);
  if ('path' in namespaced) return namespaced;
  reasons.push(`unshare -Urm: ${namespaced.unavailable}`);
  rmSync(dir, { recursive: true, force: true });
  return { unavailable: reasons.join('; ') };
}

function firstLine(error: unknown): string {
  const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
  return (stderr || (error as Error).message).split('\n')[0]!;
}

async function tmpfsInNamespace(dir: string, size: string): Promise<SmallDisk | { unavailable: string }> {
  // unshare execs the shell in the namespace (same pid), which execs cat: the namespace lives until
  // cat's stdin closes, when this process releases it or dies.
  const script = 'mount -t tmpfs -o "size=$1" tmpfs "$2" && echo ready && exec cat >/dev/null';
  let child;
  try {
    child = spawn('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c', script, 'sh', size, dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    return { unavailable: firstLine(error) };
  }
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const ready = await new Promise<boolean>((resolve) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(true));
    child.once('error', (error) => {
      stderr ||= error.message;
      resolve(false);
    });
    child.once('exit', () => resolve(false));
  });
  if (!ready) return { unavailable: stderr.trim().split('\n')[0] || 'unshare exited' };
  const pid = child.pid!;
  return {
    path: `/proc/${pid}/root${dir}`,
    how: 'tmpfs in a user namespace',
    async release() {
      child.stdin.end();
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
