import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { rateLimited } from '../../platform/http/errors.js';
import '../../platform/auth/tables.js';

/**
 * Failed logins are counted per username and per client address in a sliding 15-minute window; past
 * the threshold the key is locked for 15 minutes (429 with retry_after). Unknown usernames are
 * counted like known ones, so the answer never tells whether a user exists.
 */
const WINDOW_MS = 15 * 60_000;
const LOCK_MS = 15 * 60_000;
const THRESHOLDS = { user: 5, ip: 50 } as const;

export function throttleKeys(username: string, ip: string) {
  return { user: `user:${username.toLowerCase()}`, ip: `ip:${ip}` };
}

export async function assertNotLocked(db: Kysely<Database>, clock: Clock, keys: { user: string; ip: string }): Promise<void> {
  const now = clock.now();
  const rows = await db
    .selectFrom('login_throttle')
    .select(['locked_until'])
    .where('key', 'in', [keys.user, keys.ip])
    .where('locked_until', '>', now)
    .execute();
  if (rows.length === 0) return;
  const until = Math.max(...rows.map((r) => new Date(r.locked_until!).getTime()));
  throw rateLimited(Math.max(1, Math.ceil((until - now.getTime()) / 1000)));
}

export async function recordFailure(db: Kysely<Database>, clock: Clock, keys: { user: string; ip: string }): Promise<void> {
  const now = clock.now();
  for (const [kind, key] of Object.entries(keys) as Array<[keyof typeof THRESHOLDS, string]>) {
    const windowStart = new Date(now.getTime() - WINDOW_MS);
    await sql`
      INSERT INTO login_throttle AS t (key, failures, window_started_at, locked_until)
      VALUES (${key}, 1, ${now}, NULL)
      ON CONFLICT (key) DO UPDATE SET
        failures = CASE WHEN t.window_started_at < ${windowStart} THEN 1 ELSE t.failures + 1 END,
        window_started_at = CASE WHEN t.window_started_at < ${windowStart} THEN ${now} ELSE t.window_started_at END,
        locked_until = CASE
          WHEN (CASE WHEN t.window_started_at < ${windowStart} THEN 1 ELSE t.failures + 1 END) >= ${THRESHOLDS[kind]}
          THEN ${new Date(now.getTime() + LOCK_MS)}::timestamptz ELSE t.locked_until END`.execute(db);
  }
}

export async function clearFailures(db: Kysely<Database>, key: string): Promise<void> {
  await db.deleteFrom('login_throttle').where('key', '=', key).execute();
}
