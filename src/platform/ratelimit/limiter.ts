/** Per-tenant plans of the spec's Limits table: a token bucket of `burst` refilled at perMinute/60 per second. */
export const PLAN_LIMITS = {
  free: { perMinute: 60, burst: 10 },
  pro: { perMinute: 300, burst: 50 },
  enterprise: { perMinute: 1000, burst: 100 },
} as const;

export type Plan = keyof typeof PLAN_LIMITS;

/** A bucket's size and refill: a tenant's plan names one; buckets that belong to no tenant (the outside respondent's) give their own. */
export interface BucketLimits {
  perMinute: number;
  burst: number;
}

export const limitsOf = (limits: Plan | BucketLimits): BucketLimits => (typeof limits === 'string' ? PLAN_LIMITS[limits] : limits);

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the bucket is full again. */
  resetAt: number;
  /** Seconds until the next request would be allowed (when refused). */
  retryAfter: number;
}

export interface RateLimiter {
  consume(key: string, plan: Plan | BucketLimits, now: Date): Promise<LimitDecision>;
  close(): Promise<void>;
}

/** Decision from the bucket's level after this request's refill and (if allowed) spend. */
export function decide(tokensAfter: number, allowed: boolean, plan: Plan | BucketLimits, now: Date): LimitDecision {
  const { perMinute, burst } = limitsOf(plan);
  const ratePerSecond = perMinute / 60;
  const nowSeconds = now.getTime() / 1000;
  return {
    allowed,
    limit: perMinute,
    remaining: Math.max(0, Math.floor(tokensAfter)),
    resetAt: Math.ceil(nowSeconds + (burst - tokensAfter) / ratePerSecond),
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - tokensAfter) / ratePerSecond)),
  };
}
