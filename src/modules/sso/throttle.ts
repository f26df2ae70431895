import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { assertNotLocked, throttleKeys } from '../tenancy/index.js';

/**
 * The public SSO endpoints share the password login's throttle per client address: a failed SSO
 * login (forged, tampered, replayed or expired response, unknown state) counts against the same
 * `ip:<address>` key, and a locked address gets 429 here too. There is no per-username key: the
 * username is what the IdP vouches for, and a per-user lock would let anyone lock a user out.
 * Window, threshold and lock length are the tenancy module's values for that key.
 */
const WINDOW_MS = 15 * 60_000;
const LOCK_MS = 15 * 60_000;
const IP_THRESHOLD = 50;

function ipKey(ip: string): string {
  return throttleKeys('', ip).ip;
}

export async function assertSsoNotLocked(db: Kysely<Database>, clock: Clock, ip: string): Promise<void> {
  const key = ipKey(ip);
  await assertNotLocked(db, clock, { user: key, ip: key });
}

export async function recordSsoFailure(db: Kysely<Database>, clock: Clock, ip: string): Promise<void> {
  const now = clock.now();
  const windowStart = new Date(now.getTime() - WINDOW_MS);
  await sql`
    INSERT INTO login_throttle AS t (key, failures, window_started_at, locked_until)
    VALUES (${ipKey(ip)}, 1, ${now}, NULL)
    ON CONFLICT (key) DO UPDATE SET
      failures = CASE WHEN t.window_started_at < ${windowStart} THEN 1 ELSE t.failures + 1 END,
      window_started_at = CASE WHEN t.window_started_at < ${windowStart} THEN ${now} ELSE t.window_started_at END,
      locked_until = CASE
        WHEN (CASE WHEN t.window_started_at < ${windowStart} THEN 1 ELSE t.failures + 1 END) >= ${IP_THRESHOLD}
        THEN ${new Date(now.getTime() + LOCK_MS)}::timestamptz ELSE t.locked_until END`.execute(db);
}
