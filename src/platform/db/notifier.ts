import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';

/**
 * Cross-process wake-ups through PostgreSQL LISTEN/NOTIFY. Senders call `pg_notify` inside their
 * transaction, so a notification is delivered only once the change is committed. On PGlite (one
 * process) PGlite's own listen() receives the same notifications.
 */
export interface Notifier {
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

type Handler = (payload: string) => void;

export function createNotifier(source: { kind: 'postgres'; connectionString: string } | { kind: 'pglite'; pglite: PGlite }): Notifier {
  return source.kind === 'pglite' ? pgliteNotifier(source.pglite) : postgresNotifier(source.connectionString);
}

function pgliteNotifier(pglite: PGlite): Notifier {
  const unsubscribers = new Set<() => Promise<void>>();
  return {
    async listen(channel, onMessage) {
      const unlisten = await pglite.listen(channel, onMessage);
      const stop = async () => {
        unsubscribers.delete(stop);
        if (!pglite.closed) await unlisten();
      };
      unsubscribers.add(stop);
      return stop;
    },
    async close() {
      await Promise.all([...unsubscribers].map((stop) => stop()));
    },
  };
}

/** One dedicated connection per process, reconnected with backoff when the server goes away. */
function postgresNotifier(connectionString: string): Notifier {
  const handlers = new Map<string, Set<Handler>>();
  let client: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let closed = false;
  let retryTimer: NodeJS.Timeout | null = null;

  const connect = (): Promise<pg.Client> => {
    connecting ??= (async () => {
      const next = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
      next.on('notification', (msg) => {
        for (const handler of handlers.get(msg.channel) ?? []) handler(msg.payload ?? '');
      });
      next.on('error', () => scheduleReconnect());
      next.on('end', () => scheduleReconnect());
      await next.connect();
      for (const channel of handlers.keys()) await next.query(`LISTEN ${quoteIdent(channel)}`);
      client = next;
      return next;
    })().finally(() => {
      connecting = null;
    });
    return connecting;
  };

  const scheduleReconnect = () => {
    if (closed || retryTimer) return;
    const dead = client;
    client = null;
    dead?.end().catch(() => undefined);
    retryTimer = setTimeout(() => {
      retryTimer = null;
      if (!closed && handlers.size > 0) connect().catch(() => scheduleReconnect());
    }, 1_000);
    retryTimer.unref();
  };

  return {
    async listen(channel, onMessage) {
      let set = handlers.get(channel);
      const fresh = !set;
      if (!set) handlers.set(channel, (set = new Set()));
      set.add(onMessage);
      try {
        const conn = client ?? (await connect());
        if (fresh && conn === client) await conn.query(`LISTEN ${quoteIdent(channel)}`);
      } catch {
        scheduleReconnect();
      }
      return async () => {
        set.delete(onMessage);
        if (set.size === 0) {
          handlers.delete(channel);
          await client?.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => undefined);
        }
      };
    },
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      handlers.clear();
      const current = client;
      client = null;
      await current?.end().catch(() => undefined);
    },
  };
}

function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}
