import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../platform/db/schema.js';
import type { DatabaseHandle } from '../../../platform/db/database.js';

/**
 * One audit of a workspace at a time. Two audits of one workspace used to run side by side (two
 * discovery jobs, each auditing after its upsert; a discovery job and a queued audit; an attempt that
 * lost its lease and the retry that replaced it): each read the findings of a batch before the other
 * committed, so both inserted the same new finding and the second failed on findings_pkey (its job
 * retried), and both emitted events for one change. An audit now waits for the one before it.
 *
 * - Within a process, audits of a workspace queue in memory (`processAuditLock`); that is enough on
 *   PGlite, whose directory one process owns.
 * - On PostgreSQL, several processes may audit: `databaseAuditLock` also holds a session advisory
 *   lock per workspace for the audit's length, on a connection of its own (released if the process
 *   dies, as the connection goes).
 */
export type AuditLock = <T>(workspaceId: string, signal: AbortSignal | undefined, work: () => Promise<T>) => Promise<T>;

const queues = new Map<string, Promise<void>>();

export const processAuditLock: AuditLock = async (workspaceId, signal, work) => {
  const before = queues.get(workspaceId) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = before.then(() => mine);
  queues.set(workspaceId, tail);
  try {
    await waitFor(before, signal);
    return await work();
  } finally {
    release();
    if (queues.get(workspaceId) === tail) queues.delete(workspaceId);
  }
};

/** How often a waiting audit asks PostgreSQL for the workspace's lock again. */
const RETRY_MS = 200;

/** The advisory lock of one workspace's audits (two-key form: a fixed class, the workspace id's hash). */
const LOCK_CLASS = 727_002;

/** The database half alone (no in-process queue): what another process holding the lock looks like, for tests. */
export function advisoryAuditLock(db: Kysely<Database>): AuditLock {
  return (workspaceId, signal, work) =>
    db.connection().execute(async (conn) => {
      for (;;) {
        if (signal?.aborted) throw new Error('audit aborted');
        const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${LOCK_CLASS}, hashtext(${workspaceId})) AS locked`.execute(conn);
        if (rows[0]?.locked) break;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
      try {
        return await work();
      } finally {
        await sql`SELECT pg_advisory_unlock(${LOCK_CLASS}, hashtext(${workspaceId}))`.execute(conn).catch(() => undefined);
      }
    });
}

/** The lock the audit and discovery jobs take: in-process always, and PostgreSQL's advisory lock when there is one. */
export function databaseAuditLock(database: Pick<DatabaseHandle, 'kind' | 'db'>): AuditLock {
  if (database.kind === 'pglite') return processAuditLock;
  const advisory = advisoryAuditLock(database.db);
  return (workspaceId, signal, work) => processAuditLock(workspaceId, signal, () => advisory(workspaceId, signal, work));
}

/** Resolves with `promise`, or rejects when the signal aborts first (the queue keeps going without us). */
function waitFor(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new Error('audit aborted'));
  return new Promise((resolve, reject) => {
    const abort = () => reject(new Error('audit aborted'));
    signal.addEventListener('abort', abort, { once: true });
    promise.then(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, reject);
  });
}
