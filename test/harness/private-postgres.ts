import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './service-process.js';

const run = promisify(execFile);
const PREFIX = 'cg-pgcluster-';

/**
 * A PostgreSQL cluster of one test's own (initdb into a temporary directory, 127.0.0.1 on a free
 * port, its socket in that directory), for faults that take the server itself down: a restart
 * cannot be played on the machine's shared server. As root (CI) the cluster belongs to the
 * `postgres` OS user, since PostgreSQL refuses to run as root.
 */
export interface PrivatePostgres {
  port: number;
  /** postgres:// URL of a database of this cluster. */
  url(database?: string): string;
  /** pg_ctl with these arguments (plus -D and -w) as the cluster's owner. */
  ctl(...args: string[]): Promise<void>;
  /** The server log so far, for failure messages. */
  log(): string;
  /** Stops the server (immediately) and removes the directory; safe to call twice. */
  dispose(): Promise<void>;
}

/**
 * Where initdb and pg_ctl are: POSTGRES_BIN_DIR, else `pg_config --bindir`, else the newest
 * /usr/lib/postgresql/N/bin (Debian, Ubuntu). null when there are none.
 */
export function postgresBinDir(): string | null {
  const usable = (dir: string | undefined): dir is string => !!dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
  if (process.env.POSTGRES_BIN_DIR) return usable(process.env.POSTGRES_BIN_DIR) ? process.env.POSTGRES_BIN_DIR : null;
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    if (usable(dir)) return dir;
  } catch {
    // no pg_config on PATH
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return versions.map((v) => join(root, v, 'bin')).find(usable) ?? null;
}

/** Clusters of earlier runs killed before their cleanup (older than an hour: no test runs that long). */
async function pruneLeftovers(bin: string, asOwner: (cmd: string, args: string[]) => Promise<unknown>) {
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(PREFIX))) {
    const dir = join(tmpdir(), name);
    try {
      if (Date.now() - statSync(dir).mtimeMs < 3_600_000) continue;
      if (existsSync(join(dir, 'data', 'postmaster.pid'))) {
        await asOwner(join(bin, 'pg_ctl'), ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      }
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run's, going away by itself
    }
  }
}

export async function startPrivatePostgres(bin: string): Promise<PrivatePostgres> {
  const root = process.getuid?.() === 0;
  // From a directory the owner may enter (pg_ctl and initdb look up the current one).
  const asOwner = (cmd: string, args: string[]) => (root ? run('runuser', ['-u', 'postgres', '--', cmd, ...args], { cwd: tmpdir() }) : run(cmd, args, { cwd: tmpdir() }));
  await pruneLeftovers(bin, asOwner);
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  if (root) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
    let uid: number, gid: number;
    try {
      uid = id('-u');
      gid = id('-g');
    } catch {
      rmSync(dir, { recursive: true, force: true });
      throw new Error('running as root, the private PostgreSQL cluster needs a `postgres` OS user to own it (PostgreSQL refuses root)');
    }
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  let started = false;
  const ctl = async (...args: string[]) => {
    await asOwner(join(bin, 'pg_ctl'), ['-D', data, '-l', logFile, '-w', '-t', '60', ...args]);
  };
  const cluster: PrivatePostgres = {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    ctl,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    async dispose() {
      if (started) await ctl('-m', 'immediate', 'stop').catch(() => undefined);
      started = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await asOwner(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    appendFileSync(
      join(data, 'postgresql.conf'),
      [
        '',
        '# a private cluster of one fault test (test/harness/private-postgres.ts)',
        `port = ${port}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        'max_connections = 60',
        'shared_buffers = 32MB',
        '',
      ].join('\n'),
    );
    started = true;
    await ctl('start');
    return cluster;
  } catch (error) {
    const log = cluster.log();
    await cluster.dispose();
    const output = error as { stderr?: string };
    throw new Error(`private PostgreSQL cluster did not start: ${(error as Error).message}\n${output.stderr ?? ''}\n${log}`, { cause: error });
  }
}
