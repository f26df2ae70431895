import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** The channel on which every process hears that sessions, keys, memberships or tenants changed. */
export const AUTH_CHANNEL = 'cg_auth';

/**
 * Resolved identities (user, session, membership, key) for a few seconds, so a request costs no
 * identity query. Any change that could revoke or narrow access clears it: locally right after the
 * change commits (`invalidate`), and in other processes through the NOTIFY that `announceAuthChange`
 * sends in the change's own transaction. The generation counter keeps a lookup that started before a
 * clear from putting stale data back.
 */
export class AuthCache {
  private entries = new Map<string, { value: unknown; at: number }>();
  private generation = 0;

  constructor(
    private readonly ttlMs = 5_000,
    private readonly maxEntries = 50_000,
  ) {}

  get<T>(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (Date.now() - entry.at > this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  /** The generation to pass to `set` for a lookup starting now. */
  mark(): number {
    return this.generation;
  }

  set(key: string, value: unknown, generation: number): void {
    if (generation !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, at: Date.now() });
  }

  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }
}

/** Tells every process to drop cached identities once the caller's transaction commits. */
export async function announceAuthChange(trx: Kysely<Database>): Promise<void> {
  await sql`SELECT pg_notify(${AUTH_CHANNEL}, '')`.execute(trx);
}

/**
 * Runs a change that can revoke or narrow access in a transaction that also tells other processes,
 * then clears this process's cache once it has committed.
 */
export async function changeAccess<T>(db: Kysely<Database>, cache: AuthCache, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  const result = await db.transaction().execute(async (trx) => {
    const value = await work(trx);
    await announceAuthChange(trx);
    return value;
  });
  cache.invalidate();
  return result;
}
