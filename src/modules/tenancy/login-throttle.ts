import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { rateLimited } from '../../platform/http/errors.js';
import './tables.js';

/**
 * Login guesses are counted per username and per client address in a 15-minute window; a guess past
 * the threshold locks the key for 15 minutes (429 with retry_after). Unknown usernames are counted
 * like known ones, so the answer never tells whether a user exists.
 *
 * A guess is counted before its password is evaluated, and counting and checking are one step (one
 * transaction holding both rows' locks): of any number of parallel guesses for one username, at most
 * `THRESHOLDS.user` are evaluated in a window. Checking first and counting the failure afterwards let
 * 60 parallel guesses all pass the check before the first failure was counted.
 */
const WINDOW_MS = 15 * 60_000;
const LOCK_MS = 15 * 60_000;
export const THRESHOLDS = { user: 5, ip: 50 } as const;

export interface ThrottleKeys {
  user: string;
  ip: string;
}

export function throttleKeys(username: string, ip: string): ThrottleKeys {
  return { user: `user:${username.toLowerCase()}`, ip: `ip:${ip}` };
}

const retryAfter = (until: Date, now: Date) => Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));

/** 429 while either key is locked. */
export async function assertNotLocked(db: Kysely<Database>, clock: Clock, keys: ThrottleKeys): Promise<void> {
  const now = clock.now();
  const rows = await db.selectFrom('login_throttle').select(['locked_until']).where('key', 'in', [keys.user, keys.ip]).where('locked_until', '>', now).execute();
  if (rows.length === 0) return;
  const until = Math.max(...rows.map((r) => new Date(r.locked_until!).getTime()));
  throw rateLimited(retryAfter(new Date(until), now));
}

/** What an admitted guess counted: `user` is its number among the username's guesses of the window. */
export interface AdmittedGuess {
  user: number;
}

/**
 * Counts a guess for both keys, or refuses it with 429 without counting it: when a key is locked, or
 * when the guess would be one past a key's threshold (which locks that key). Refused guesses are not
 * counted, so a locked username does not use up its address's allowance too.
 */
export async function admitGuess(db: Kysely<Database>, clock: Clock, keys: ThrottleKeys): Promise<AdmittedGuess> {
  const now = clock.now();
  const windowStart = now.getTime() - WINDOW_MS;
  // Sorted, so two logins lock the same rows in the same order (no deadlock on PostgreSQL).
  const ordered = (Object.entries(keys) as Array<[keyof ThrottleKeys, string]>).sort((x, y) => x[1].localeCompare(y[1]));
  const outcome = await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('login_throttle')
      .values(ordered.map(([, key]) => ({ key, failures: 0, window_started_at: now, locked_until: null })))
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const rows = await trx
      .selectFrom('login_throttle')
      .selectAll()
      .where(
        'key',
        'in',
        ordered.map(([, key]) => key),
      )
      .orderBy('key')
      .forUpdate()
      .execute();
    const state = ordered.map(([kind, key]) => {
      const row = rows.find((r) => r.key === key)!;
      const lockedUntil = row.locked_until ? new Date(row.locked_until) : null;
      const expired = new Date(row.window_started_at).getTime() < windowStart;
      return { kind, key, lockedUntil: lockedUntil && lockedUntil > now ? lockedUntil : null, counted: expired ? 0 : row.failures, expired };
    });
    const locked = state.filter((s) => s.lockedUntil).map((s) => s.lockedUntil!.getTime());
    if (locked.length > 0) return { refused: retryAfter(new Date(Math.max(...locked)), now) };
    const over = state.filter((s) => s.counted + 1 > THRESHOLDS[s.kind]);
    if (over.length > 0) {
      const until = new Date(now.getTime() + LOCK_MS);
      await trx
        .updateTable('login_throttle')
        .set({ locked_until: until })
        .where(
          'key',
          'in',
          over.map((s) => s.key),
        )
        .execute();
      return { refused: retryAfter(until, now) };
    }
    for (const s of state) {
      await trx
        .updateTable('login_throttle')
        .set({ failures: s.counted + 1, ...(s.expired ? { window_started_at: now } : {}), locked_until: null })
        .where('key', '=', s.key)
        .execute();
    }
    return { user: state.find((s) => s.kind === 'user')!.counted + 1 };
  });
  if (outcome.refused !== undefined) throw rateLimited(outcome.refused);
  return { user: outcome.user };
}

/**
 * A successful login: the username's guesses up to this one are forgiven (guesses counted after it,
 * still being evaluated, stay counted), and this guess no longer counts against the address.
 */
export async function forgiveGuesses(db: Kysely<Database>, keys: ThrottleKeys, admitted: AdmittedGuess): Promise<void> {
  await db
    .updateTable('login_throttle')
    .set({ failures: sql<number>`greatest(failures - ${admitted.user}, 0)`, locked_until: null })
    .where('key', '=', keys.user)
    .execute();
  await forgiveAddressGuess(db, keys);
}

/**
 * A right password that still needs its one-time code: the guess stays counted against the username
 * (until the code passes) but not against the address, so the two steps of each multi-factor sign-in
 * do not use up a shared office address's allowance twice.
 */
export async function forgiveAddressGuess(db: Kysely<Database>, keys: ThrottleKeys): Promise<void> {
  await db
    .updateTable('login_throttle')
    .set({ failures: sql<number>`greatest(failures - 1, 0)` })
    .where('key', '=', keys.ip)
    .execute();
}

/**
 * The public SSO endpoints share this throttle per client address: a failed SSO login (forged,
 * tampered, replayed or expired response, unknown state) counts against the same `ip:<address>` key
 * with the same window, threshold and lock, and a locked address gets 429 there too. There is no
 * per-username key: the username is what the IdP vouches for, and a per-user lock would let anyone
 * lock a user out.
 */
export async function assertAddressNotLocked(db: Kysely<Database>, clock: Clock, ip: string): Promise<void> {
  const key = throttleKeys('', ip).ip;
  await assertNotLocked(db, clock, { user: key, ip: key });
}

/** Counts a failed SSO login against its client address (after the fact: nothing is evaluated per guess). */
export async function recordAddressFailure(db: Kysely<Database>, clock: Clock, ip: string): Promise<void> {
  const now = clock.now();
  const windowStart = new Date(now.getTime() - WINDOW_MS);
  await sql`
    INSERT INTO login_throttle AS t (key, failures, window_started_at, locked_until)
    VALUES (${throttleKeys('', ip).ip}, 1, ${now}, NULL)
    ON CONFLICT (key) DO UPDATE SET
      failures = CASE WHEN t.window_started_at < ${windowStart} THEN 1 ELSE t.failures + 1 END,
      window_started_at = CASE WHEN t.window_started_at < ${windowStart} THEN ${now} ELSE t.window_started_at END,
      locked_until = CASE
        WHEN (CASE WHEN t.window_started_at < ${windowStart} THEN 1 ELSE t.failures + 1 END) >= ${THRESHOLDS.ip}
        THEN ${new Date(now.getTime() + LOCK_MS)}::timestamptz ELSE t.locked_until END`.execute(db);
}
