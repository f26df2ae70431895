import { readFileSync, readlinkSync, statSync } from 'node:fs';
import { readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';

/**
 * One owner per embedded (PGlite) data directory.
 *
 * PGlite is a whole PostgreSQL in one process: two processes opening the same directory each believe
 * they own the files, and the second one's writes (or its checkpoint) destroy the first one's (seen:
 * "PANIC: could not locate a valid checkpoint record", the day's data gone). So the directory is locked
 * before PGlite opens it, and a second opener is refused at once, told who holds it.
 *
 * The lock is `proper-lockfile`'s: `<dir>/controlgraph.lock` is created with mkdir (atomic, also on
 * network file systems) and its mtime refreshed every STALE_MS / 2 while the holder lives. Beside it,
 * `<dir>/controlgraph.owner.json` records who holds it (pid, host, command, listening URL) so that a
 * refusal can name the holder and the CLI can talk to the running service instead of the files.
 *
 * A holder killed with `kill -9` leaves both behind. The next opener on the same host sees that the
 * recorded process is gone (same host and pid namespace, pid no longer running, or running but started
 * at another time: a reused pid) and takes the lock at once. A holder on another host (a shared volume)
 * cannot be checked that way: its lock is stale once its mtime is STALE_MS old.
 */
export const LOCK_NAME = 'controlgraph.lock';
export const OWNER_NAME = 'controlgraph.owner.json';

/** A lock not refreshed for this long belongs to a dead process (or a machine that lost the volume). */
export const STALE_MS = 60_000;

export interface HolderRecord {
  pid: number;
  hostname: string;
  /** Linux pid namespace (`pid:[…]`): a pid says something about a process only inside its namespace. */
  pid_namespace: string | null;
  /** Linux start time of the process (clock ticks since boot), telling a reused pid from the holder. */
  process_start: string | null;
  command: string;
  started_at: string;
  /** Where the holder serves the API, once it listens (null: not yet, or it does not serve the API). */
  url: string | null;
}

export class DirectoryLockedError extends Error {
  override name = 'DirectoryLockedError';
  /** The CLI's exit status for "refused: someone else owns this". */
  readonly exitCode = 2;
  constructor(
    readonly dir: string,
    readonly holder: HolderRecord | null,
  ) {
    super(lockedMessage(dir, holder));
  }
}

export interface DirectoryLock {
  readonly dir: string;
  readonly record: HolderRecord;
  /** Records more about the holder (its listening URL once it listens). */
  update(patch: Partial<Pick<HolderRecord, 'url'>>): Promise<void>;
  release(): Promise<void>;
}

export interface LockOptions {
  /** What the holder is, for the message a second opener gets (never arguments: they may be secrets). */
  command: string;
  /** Called when the lock was lost while held (its directory removed, or taken as stale). */
  onCompromised?: (error: Error) => void;
}

const pidNamespace = (() => {
  let cached: string | null | undefined;
  return () => {
    if (cached === undefined) {
      try {
        cached = readlinkSync('/proc/self/ns/pid');
      } catch {
        cached = null;
      }
    }
    return cached;
  };
})();

/** Field 22 of /proc/<pid>/stat (after the parenthesised name, which may hold spaces). */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function ownRecord(command: string): HolderRecord {
  return {
    pid: process.pid,
    hostname: hostname(),
    pid_namespace: pidNamespace(),
    process_start: processStart(process.pid),
    command,
    started_at: new Date().toISOString(),
    url: null,
  };
}

/** Whether the recorded process can be checked from here (same host, same pid namespace). */
function checkable(record: HolderRecord): boolean {
  return record.hostname === hostname() && record.pid_namespace === pidNamespace();
}

/** Whether the recorded process still runs (only meaningful when `checkable`). */
function running(record: HolderRecord): boolean {
  try {
    process.kill(record.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = record.process_start === null ? null : processStart(record.pid);
  return start === null || start === record.process_start;
}

async function readRecord(dir: string): Promise<HolderRecord | null> {
  try {
    const parsed = JSON.parse(await readFile(join(dir, OWNER_NAME), 'utf8')) as HolderRecord;
    return typeof parsed?.pid === 'number' && typeof parsed.hostname === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

async function writeRecord(dir: string, record: HolderRecord): Promise<void> {
  // Written aside and renamed: a reader never sees half a record.
  const temporary = join(dir, `${OWNER_NAME}.${process.pid}.tmp`);
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`);
  await rename(temporary, join(dir, OWNER_NAME));
}

function lockAge(dir: string): number | null {
  try {
    return Date.now() - statSync(join(dir, LOCK_NAME)).mtimeMs;
  } catch {
    return null;
  }
}

/**
 * The live holder of a directory, or null when nobody holds it (no lock, a stale one, or one whose
 * recorded process is gone). A holder that has not written its record yet is `{ holder: null }`.
 */
export async function currentHolder(dir: string): Promise<{ holder: HolderRecord | null } | null> {
  const age = lockAge(dir);
  if (age === null) return null;
  const record = await readRecord(dir);
  if (record && checkable(record)) return running(record) ? { holder: record } : null;
  return age < STALE_MS ? { holder: record } : null;
}

const options = (dir: string, onCompromised: (error: Error) => void) => ({
  lockfilePath: join(dir, LOCK_NAME),
  realpath: false,
  stale: STALE_MS,
  retries: 0,
  onCompromised,
});

/** Takes the directory's lock, or throws DirectoryLockedError naming the holder. */
export async function lockDirectory(dir: string, lockOptions: LockOptions): Promise<DirectoryLock> {
  const previous = await readRecord(dir);
  const compromised =
    lockOptions.onCompromised ??
    ((error: Error) => {
      // Two processes now write the same files: stop before this one corrupts them.
      process.stderr.write(`controlgraph: lost the lock on ${dir} (${error.message}); exiting to protect the database\n`);
      process.exit(70);
    });
  if (lockAge(dir) !== null && previous && checkable(previous) && running(previous)) {
    // A live holder on this host keeps its lock even when its refresh is late (a busy event loop).
    throw new DirectoryLockedError(dir, previous);
  }
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dir, options(dir, compromised));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    if (!(previous && checkable(previous) && !running(previous))) throw new DirectoryLockedError(dir, await readRecord(dir));
    // Left behind by a holder that died (kill -9, power loss): take it over now rather than after
    // STALE_MS. Renamed away first, so that of two openers doing this at once only one removes it.
    const aside = join(dir, `${LOCK_NAME}.stale-${process.pid}`);
    try {
      await rename(join(dir, LOCK_NAME), aside);
      await rmdir(aside);
    } catch {
      throw new DirectoryLockedError(dir, await readRecord(dir));
    }
    try {
      release = await lockfile.lock(dir, options(dir, compromised));
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code === 'ELOCKED') throw new DirectoryLockedError(dir, await readRecord(dir));
      throw again;
    }
  }
  let record = ownRecord(lockOptions.command);
  await writeRecord(dir, record);
  let released = false;
  return {
    dir,
    get record() {
      return record;
    },
    async update(patch) {
      if (released) return;
      record = { ...record, ...patch };
      await writeRecord(dir, record);
    },
    async release() {
      if (released) return;
      released = true;
      await rm(join(dir, OWNER_NAME), { force: true });
      await release();
    },
  };
}

function lockedMessage(dir: string, holder: HolderRecord | null): string {
  const who = holder
    ? `process ${holder.pid} on ${holder.hostname} (${holder.command}${holder.url ? `, serving ${holder.url}` : ', serving no API (yet)'}, since ${holder.started_at})`
    : 'a process that is starting and has not recorded itself yet';
  const stop = holder && checkable(holder) ? `stop it first (kill -TERM ${holder.pid})` : 'stop it first';
  return (
    `the embedded database ${dir} is in use by ${who}. A PGlite data directory is opened by one process at a time. ` +
    `Instead: ${holder?.url ? `run data commands against that service (controlgraph vulndb, user and migrate do so by themselves, or pass --server ${holder.url}), ` : ''}` +
    `${stop}, or give this process another DATABASE_URL. ` +
    `(A lock left by a process that died is taken over at once on the same host, elsewhere once ${join(dir, LOCK_NAME)} is ${STALE_MS / 1000} s old.)`
  );
}
