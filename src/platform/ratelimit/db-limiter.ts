import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { decide, limitsOf, type RateLimiter } from './limiter.js';
import './tables.js';

/**
 * Token buckets in the shared database, so every API process sees the same bucket. One statement per
 * request: lock the bucket row, refill it for the time elapsed, spend a token when there is one.
 * Concurrent requests on a bucket serialise on the row lock (READ COMMITTED re-reads the locked row).
 */
export function createDbRateLimiter(db: Kysely<Database>): RateLimiter {
  return {
    async consume(key, plan, now) {
      const { perMinute, burst } = limitsOf(plan);
      const rate = perMinute / 60;
      const result = await sql<{ refilled: number }>`
        WITH previous AS (
          SELECT tokens, updated_at FROM rate_limit_buckets WHERE key = ${key} FOR UPDATE
        ), level AS (
          SELECT coalesce(
            (SELECT least(${burst}::float8, tokens + greatest(0, extract(epoch FROM (${now}::timestamptz - updated_at))::float8) * ${rate}::float8) FROM previous),
            ${burst}::float8) AS refilled
        ), saved AS (
          INSERT INTO rate_limit_buckets (key, tokens, updated_at)
          SELECT ${key}, CASE WHEN refilled >= 1 THEN refilled - 1 ELSE refilled END, ${now}::timestamptz FROM level
          ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at
          RETURNING tokens
        )
        SELECT level.refilled FROM level, saved`.execute(db);
      const refilled = Number(result.rows[0]!.refilled);
      const allowed = refilled >= 1;
      return decide(allowed ? refilled - 1 : refilled, allowed, plan, now);
    },
    async close() {},
  };
}
