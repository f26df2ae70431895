import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { createNotifier, type Notifier } from './notifier.js';

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
  /** true when a trivial query answers within the timeout. */
  ping(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Pool size for PostgreSQL (PGlite always has one connection). */
  poolSize?: number;
}

export async function openDatabase(url: string, options: OpenOptions = {}): Promise<DatabaseHandle> {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, options);
  if (url.startsWith('pglite://')) return openPglite(url.slice('pglite://'.length));
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
  return finish(pool, 'postgres', notifier, async () => {
    await notifier.close();
    await pool.end();
  });
}

async function openPglite(location: string): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  let pglite;
  if (location === 'memory' || location === '') {
    pglite = new PGlite();
  } else {
    const dir = resolve(location);
    mkdirSync(dir, { recursive: true });
    pglite = new PGlite(dir);
  }
  await pglite.waitReady;
  // One PGlite connection: node-postgres' pool of one serialises clients, so a transaction never
  // sees another request's statements (the reason not to use kysely-pglite).
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 } as pg.PoolConfig);
  const notifier = createNotifier({ kind: 'pglite', pglite });
  let closed = false;
  return finish(pool, 'pglite', notifier, async () => {
    if (closed) return;
    closed = true;
    await notifier.close();
    await pool.end();
    await pglite.close();
  });
}

function finish(pool: pg.Pool, kind: DatabaseKind, notifier: Notifier, close: () => Promise<void>): DatabaseHandle {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let closing: Promise<void> | null = null;
  return {
    db,
    kind,
    pool,
    notifier,
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
