import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { rateLimited } from '../../platform/http/errors.js';
import type { BucketLimits } from '../../platform/ratelimit/limiter.js';

/**
 * Rate limits of the outside respondent's routes (/respond/*). They belong to no tenant's plan (the
 * authenticator's per-tenant bucket never sees these public routes), so they have buckets of their
 * own in the service's limiter (CONTROLGRAPH_RATE_LIMITS, Redis or the database):
 *
 * - per client address: bounds guessing tokens, and floods with revoked or expired ones, which
 *   would otherwise each cost a lookup (and an audit entry);
 * - per token: one supplier's browser saving as they type stays far below it, a leaked or
 *   scripted token cannot hammer one assessment from many addresses.
 *
 * Both are spent before the token is looked up; the refused request answers 429 RATE_LIMITED with
 * Retry-After, like every 429 of the service.
 */
export const RESPONDENT_LIMITS = {
  address: { perMinute: 120, burst: 60 },
  token: { perMinute: 60, burst: 30 },
} as const satisfies Record<string, BucketLimits>;

/** The bucket key of a token: a hash, so no token is ever written to the limiter's store. */
const tokenKey = (token: string) => `respond-token:${createHash('sha256').update(token).digest('hex').slice(0, 40)}`;

export function createRespondentRateLimit(deps: Pick<AppDeps, 'rateLimiter' | 'clock'>) {
  return async function limit(request: FastifyRequest, reply: FastifyReply, token: string | null): Promise<void> {
    const limiter = deps.rateLimiter;
    if (!limiter) return;
    const buckets: Array<[string, BucketLimits]> = [[`respond-ip:${request.ip}`, RESPONDENT_LIMITS.address]];
    if (token) buckets.push([tokenKey(token), RESPONDENT_LIMITS.token]);
    for (const [key, limits] of buckets) {
      const decision = await limiter.consume(key, limits, deps.clock.now());
      // The headers of the narrower bucket (the token's, when there is one) are the ones left.
      reply.header('x-ratelimit-limit', decision.limit);
      reply.header('x-ratelimit-remaining', decision.remaining);
      reply.header('x-ratelimit-reset', decision.resetAt);
      if (!decision.allowed) throw rateLimited(decision.retryAfter);
    }
  };
}
