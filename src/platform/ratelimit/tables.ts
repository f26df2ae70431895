import type { Timestamp } from '../db/schema.js';

/** Token buckets of the database rate limiter (db-limiter.ts). */
declare module '../db/schema.js' {
  interface Database {
    rate_limit_buckets: { key: string; tokens: number; updated_at: Timestamp };
  }
}

export {};
