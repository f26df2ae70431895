import { Redis } from 'ioredis';
import { decide, limitsOf, type RateLimiter } from './limiter.js';

// Refill and spend atomically inside Redis; the bucket expires once it would be full again anyway.
const SCRIPT = `
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil then tokens = burst; at = now end
local refilled = math.min(burst, tokens + math.max(0, now - at) * rate)
local allowed = 0
if refilled >= 1 then refilled = refilled - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(refilled), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 60)
return {allowed, tostring(refilled)}
`;

/** Token buckets in Redis (REDIS_URL): the same semantics as the database limiter, cheaper per request. */
export function createRedisRateLimiter(url: string): RateLimiter {
  const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  redis.on('error', () => undefined);
  return {
    async consume(key, plan, now) {
      const { perMinute, burst } = limitsOf(plan);
      const [allowed, tokens] = (await redis.eval(SCRIPT, 1, `cg:rl:${key}`, burst, perMinute / 60, now.getTime() / 1000)) as [number, string];
      return decide(Number(tokens), allowed === 1, plan, now);
    },
    async close() {
      await redis.quit().catch(() => undefined);
    },
  };
}
