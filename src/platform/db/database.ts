import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Kysely, PostgresDialect, type KyselyPlugin } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { createNotifier, type Notifier } from './notifier.js';
import { lockDirectory, type DirectoryLock } from './directory-lock.js';

// int8 (counts, bigserial) as JS numbers: our counts stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
// numeric as number (scores); dates (no time) stay 'YYYY-MM-DD' strings, as the API returns them.
pg.types.setTypeParser(1700, (v) => Number(v));
pg.types.setTypeParser(1082, (v) => v);

export type DatabaseKind = 'pglite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseKind;
  pool: pg.Pool;
  notifier: Notifier;
  /** The embedded data directory's lock (directory-lock.ts); null for PostgreSQL and in-memory PGlite. */
  lock: DirectoryLock | null;
  /** true when a trivial query answers within the timeout. */
  ping(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Pool size for PostgreSQL (PGlite always has one connection). */
  poolSize?: number;
  /**
   * What this process is, recorded with the embedded directory's lock so that a second opener is told
   * who holds it (e.g. "controlgraph serve"; never arguments, they may carry secrets).
   */
  owner?: string;
}

export async function openDatabase(url: string, options: OpenOptions = {}): Promise<DatabaseHandle> {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, options);
  if (url.startsWith('pglite://')) return openPglite(url.slice('pglite://'.length), options);
  throw new Error(`DATABASE_URL must start with postgres:// or pglite:// (got "${url.split(':')[0]}:")`);
}

async function openPostgres(url: string, options: OpenOptions): Promise<DatabaseHandle> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  // Nor a checked-out client between two queries (e.g. in a transaction) when the server goes away:
  // pg emits that as an 'error' event on the client; its next query fails and the pool drops it.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const notifier = createNotifier({ kind: 'postgres', connectionString: url });
  return finish(pool, 'postgres', notifier, null, async () => {
    await notifier.close();
    await pool.end();
  });
}

/** The data directory of a `pglite://` URL, or null for an in-memory database. */
export function pgliteDirectory(url: string): string | null {
  if (!url.startsWith('pglite://')) return null;
  const location = url.slice('pglite://'.length);
  return location === 'memory' || location === '' ? null : resolve(location);
}

async function openPglite(location: string, options: OpenOptions): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  // pg_trgm serves the findings search (migration 0030); PGlite ships it as a loadable extension.
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const extensions = { pg_trgm };
  let pglite;
  let lock: DirectoryLock | null = null;
  const dir = pgliteDirectory(`pglite://${location}`);
  if (dir === null) {
    pglite = new PGlite({ extensions });
  } else {
    mkdirSync(dir, { recursive: true });
    // Before PGlite touches a file: a second process in the same directory destroys the data.
    lock = await lockDirectory(dir, { command: options.owner ?? defaultOwner() });
    try {
      pglite = new PGlite(dir, { extensions });
      await pglite.waitReady;
    } catch (error) {
      await lock.release();
      throw error;
    }
  }
  await pglite.waitReady;
  // One PGlite connection: node-postgres' pool of one serialises clients, so a transaction never
  // sees another request's statements (the reason not to use kysely-pglite).
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 } as pg.PoolConfig);
  const notifier = createNotifier({ kind: 'pglite', pglite });
  let closed = false;
  return finish(pool, 'pglite', notifier, lock, async () => {
    if (closed) return;
    closed = true;
    try {
      await notifier.close();
      await pool.end();
      await pglite.close();
    } finally {
      // Only once PGlite has written its last page.
      await lock?.release();
    }
  });
}

/** The program's name without its arguments (they may carry secrets). */
function defaultOwner(): string {
  const script = process.argv[1];
  return script ? `${process.argv0} ${script}` : process.argv0;
}

/**
 * PGlite runs each statement on the service's own thread and hands the answer back as a resolved
 * promise, so a chain of statements (a transaction, an audit's batches) ran as one long stretch of
 * microtasks: the event loop read no HTTP request until it ended. During a 100,000-node audit
 * /healthz waited up to 100 s, though no single statement took a second. After each statement the
 * caller now continues in a new turn of the event loop, so requests are read meanwhile and queue for
 * the connection beside the chain (issue 20; docs/benchmarks.md). Between whole statements, never
 * inside one: the protocol messages of a statement stay together.
 */
const yieldAfterEachStatement: KyselyPlugin = {
  transformQuery: (args) => args.node,
  transformResult: async (args) => {
    await new Promise((resolve) => setImmediate(resolve));
    return args.result;
  },
};

function finish(pool: pg.Pool, kind: DatabaseKind, notifier: Notifier, lock: DirectoryLock | null, close: () => Promise<void>): DatabaseHandle {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins: kind === 'pglite' ? [yieldAfterEachStatement] : [] });
  let closing: Promise<void> | null = null;
  return {
    db,
    kind,
    pool,
    notifier,
    lock,
    async ping(timeoutMs = 2_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolveTimeout) => {
        timer = setTimeout(() => resolveTimeout(false), timeoutMs);
      });
      const query = pool.query('SELECT 1').then(
        () => true,
        () => false,
      );
      try {
        return await Promise.race([query, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
}
