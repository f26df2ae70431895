import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Clock } from './platform/clock.js';
import type { DatabaseHandle } from './platform/db/database.js';
import type { ArtifactStore } from './platform/artifacts/index.js';
import type { Metrics } from './platform/metrics.js';
import type { RateLimiter } from './platform/ratelimit/limiter.js';
import type { AuthCache } from './platform/auth/auth-cache.js';

/** What every module may use. Services take narrow `Pick<AppDeps, …>` slices of it. */
export interface AppDeps {
  config: Config;
  database: DatabaseHandle;
  clock: Clock;
  /** null when ARTIFACT_STORE=none: artifact endpoints then answer 503. */
  artifacts: ArtifactStore | null;
  log: Logger;
  metrics: Metrics;
  startedAt: Date;
  version: string;
  /** The key that signs access tokens (loaded once, lazily). */
  tokenKey: () => Promise<Uint8Array>;
  /** null when rate limits are switched off (CONTROLGRAPH_RATE_LIMITS=off). */
  rateLimiter: RateLimiter | null;
  /** Resolved identities of recent requests; cleared on every auth-relevant change. */
  authCache: AuthCache;
}
