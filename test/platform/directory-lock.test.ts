import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  currentHolder,
  DirectoryLockedError,
  LOCK_NAME,
  lockDirectory,
  OWNER_NAME,
  STALE_MS,
  type DirectoryLock,
  type HolderRecord,
} from '../../src/platform/db/directory-lock.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { dbKind } from '../harness/database.js';

/**
 * The embedded database's directory lock on a real file system: who holds it, a second opener in the
 * same process, holders that died (kill -9), holders on another host, and openDatabase using it.
 */
const dirs: string[] = [];
const held: DirectoryLock[] = [];
afterEach(async () => {
  for (const lock of held.splice(0)) await lock.release();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cg-dirlock-'));
  dirs.push(dir);
  return dir;
}

async function take(dir: string, command = 'test holder'): Promise<DirectoryLock> {
  const lock = await lockDirectory(dir, { command, onCompromised: () => undefined });
  held.push(lock);
  return lock;
}

function pidNamespace(): string | null {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
}

/** A lock as a process left it: the lock directory (its mtime `ageMs` old) and its record. */
function leftBehind(dir: string, record: Partial<HolderRecord>, ageMs = 0): void {
  mkdirSync(join(dir, LOCK_NAME));
  const full: HolderRecord = {
    pid: 1,
    hostname: hostname(),
    pid_namespace: pidNamespace(),
    process_start: null,
    command: 'controlgraph serve',
    started_at: new Date().toISOString(),
    url: 'http://127.0.0.1:9',
    ...record,
  };
  writeFileSync(join(dir, OWNER_NAME), JSON.stringify(full));
  const when = new Date(Date.now() - ageMs);
  utimesSync(join(dir, LOCK_NAME), when, when);
}

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

// File-system behaviour, the same whatever the test project's database: run once, in the PGlite project.
describe.runIf(dbKind() === 'pglite')('lockDirectory', () => {
  it('records the holder; a second opener is refused naming it; released, the directory can be taken again', async () => {
    const dir = scratch();
    const lock = await take(dir, 'controlgraph serve');
    await lock.update({ url: 'http://127.0.0.1:3000' });
    expect(JSON.parse(readFileSync(join(dir, OWNER_NAME), 'utf8'))).toMatchObject({ pid: process.pid, command: 'controlgraph serve', url: 'http://127.0.0.1:3000' });
    expect(await currentHolder(dir)).toEqual({ holder: expect.objectContaining({ pid: process.pid }) });

    const refused = await lockDirectory(dir, { command: 'second' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DirectoryLockedError);
    const error = refused as DirectoryLockedError;
    expect(error.exitCode).toBe(2);
    expect(error.holder).toMatchObject({ pid: process.pid, url: 'http://127.0.0.1:3000' });
    expect(error.message).toContain(`is in use by process ${process.pid} on ${hostname()} (controlgraph serve, serving http://127.0.0.1:3000`);
    expect(error.message).toContain('--server http://127.0.0.1:3000');
    expect(error.message).toContain(`kill -TERM ${process.pid}`);

    await lock.release();
    held.splice(0);
    expect(existsSync(join(dir, LOCK_NAME))).toBe(false);
    expect(existsSync(join(dir, OWNER_NAME))).toBe(false);
    expect(await currentHolder(dir)).toBeNull();
    await take(dir);
  });

  it('a lock left by a process that died on this host (kill -9) is taken over at once', async () => {
    const dir = scratch();
    leftBehind(dir, { pid: await deadPid() });
    expect(await currentHolder(dir)).toBeNull();
    const lock = await take(dir);
    expect(lock.record.pid).toBe(process.pid);
  });

  it('a live holder on this host keeps its lock, even when its refresh is late (a busy event loop)', async () => {
    const dir = scratch();
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    try {
      leftBehind(dir, { pid: sleeper.pid! }, STALE_MS * 2);
      expect(await currentHolder(dir)).toEqual({ holder: expect.objectContaining({ pid: sleeper.pid }) });
      await expect(lockDirectory(dir, { command: 'x' })).rejects.toMatchObject({ name: 'DirectoryLockedError', holder: { pid: sleeper.pid } });
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('a recorded pid now used by another process (started at another time) is not the holder', async () => {
    const dir = scratch();
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    try {
      leftBehind(dir, { pid: sleeper.pid!, process_start: '1' });
      const lock = await take(dir);
      expect(lock.record.pid).toBe(process.pid);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('a holder on another host is refused while its lock is fresh, and taken over once stale', async () => {
    const fresh = scratch();
    leftBehind(fresh, { pid: 4242, hostname: 'another-host', url: null });
    await expect(lockDirectory(fresh, { command: 'x' })).rejects.toThrow(/in use by process 4242 on another-host \(controlgraph serve, serving no API \(yet\), since /);

    const stale = scratch();
    leftBehind(stale, { pid: 4242, hostname: 'another-host' }, STALE_MS + 5_000);
    expect(await currentHolder(stale)).toBeNull();
    expect((await take(stale)).record.pid).toBe(process.pid);
  });

  it('a lock without a record (a holder still starting) is refused as such', async () => {
    const dir = scratch();
    mkdirSync(join(dir, LOCK_NAME));
    await expect(lockDirectory(dir, { command: 'x' })).rejects.toThrow(/in use by a process that is starting and has not recorded itself yet/);
  });
});

describe.runIf(dbKind() === 'pglite')('openDatabase on an embedded directory', () => {
  it('holds the lock while open and releases it on close; a second open is refused before PGlite touches the files', async () => {
    const dir = scratch();
    const first = await openDatabase(`pglite://${dir}`, { owner: 'test opener' });
    try {
      expect(first.lock?.record).toMatchObject({ pid: process.pid, command: 'test opener' });
      await expect(openDatabase(`pglite://${dir}`)).rejects.toBeInstanceOf(DirectoryLockedError);
      expect(Number((await first.db.selectNoFrom((eb) => eb.val(1).as('one')).executeTakeFirstOrThrow()).one)).toBe(1);
    } finally {
      await first.close();
    }
    expect(existsSync(join(dir, LOCK_NAME))).toBe(false);
    const again = await openDatabase(`pglite://${dir}`);
    await again.close();
  });

  it('an in-memory database takes no lock', async () => {
    const memory = await openDatabase('pglite://memory');
    expect(memory.lock).toBeNull();
    await memory.close();
  });
});
