import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../config.js';
import type { Clock } from '../clock.js';
import type { DatabaseHandle } from '../db/database.js';
import type { Scope } from '../db/scope.js';
import type { Metrics } from '../metrics.js';

/**
 * Dashboard answers kept under their read version (issue 23, "reads are cheap").
 *
 * Every write to a table the dashboards read raises its workspace's or tenant's counter in
 * `read_versions`, by trigger, in the writing transaction (migration 0038). A route that declares
 * `readCache` is answered from memory while the sum of the two counters is the one its answer was
 * computed under: one primary-key read instead of the page, the scores or the groups. A committed
 * write therefore shows on the next request in every process; what changes with time alone (an SLA
 * due time passing, an acceptance lapsing) shows within `readCacheTtlMs`, after which the answer is
 * computed again. The version is read before the handler runs, so an answer computed while a write
 * commits is kept under the older version and never served after it.
 *
 * The key holds the workspace, the caller's role and the request target as sent: answers do not
 * vary by anything else a caller holds, and the permission check has already run (onRequest).
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The answer depends only on the tables that raise read versions, the request target and the time. */
    readCache?: boolean;
  }
  interface FastifyRequest {
    readCacheSlot?: Slot;
  }
}

interface Slot {
  key: string;
  version: string;
  at: number;
}

interface Kept extends Slot {
  body: string;
  headers: Record<string, string>;
}

/** Headers a kept answer is sent with again (the rest are the request's own: id, rate limits). */
const KEPT_HEADERS = ['content-type', 'link'];

/** The version a workspace's dashboards are at: its counter plus its tenant's (each only grows). */
async function readVersion(deps: { database: DatabaseHandle }, scope: Scope): Promise<string> {
  const result = await sql<{ v: string }>`
    SELECT coalesce(sum(version), 0)::text AS v FROM read_versions WHERE scope_id IN (${scope.workspaceId}::uuid, ${scope.tenantId}::uuid)`.execute(deps.database.db);
  return result.rows[0]?.v ?? '0';
}

interface ReadCacheDeps {
  database: DatabaseHandle;
  clock: Clock;
  config: Pick<Config, 'readCacheBytes' | 'readCacheTtlMs'>;
  metrics: Metrics;
}

export function installReadCache(app: FastifyInstance, deps: ReadCacheDeps): void {
  const { readCacheBytes: maxSize, readCacheTtlMs: ttl } = deps.config;
  if (maxSize <= 0 || ttl <= 0) return;
  const kept = new LRUCache<string, Kept>({
    maxSize,
    // One answer may not push out more than an eighth of the others.
    maxEntrySize: Math.max(1, Math.floor(maxSize / 8)),
    sizeCalculation: (entry) => entry.body.length + entry.key.length + 256,
  });
  const counted = (outcome: 'hit' | 'miss') => deps.metrics.readCache.inc({ outcome });

  app.addHook('preHandler', async (request, reply) => {
    const slot = await slotOf(request);
    if (!slot) return;
    const entry = kept.get(slot.key);
    if (entry && entry.version === slot.version && Math.abs(slot.at - entry.at) < ttl) {
      counted('hit');
      reply.header('x-read-cache', 'hit');
      for (const [name, value] of Object.entries(entry.headers)) reply.header(name, value);
      return reply.send(entry.body);
    }
    counted('miss');
    request.readCacheSlot = slot;
    reply.header('x-read-cache', 'miss');
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const slot = request.readCacheSlot;
    if (slot && reply.statusCode === 200 && typeof payload === 'string') {
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = reply.getHeader(name);
        if (typeof value === 'string') headers[name] = value;
      }
      kept.set(slot.key, { ...slot, body: payload, headers });
    }
    return payload;
  });

  async function slotOf(request: FastifyRequest): Promise<Slot | null> {
    if (request.method !== 'GET' || !request.routeOptions.config?.readCache || !request.ctx) return null;
    const { scope, actor } = request.ctx;
    const version = await readVersion(deps, scope);
    return { key: `${scope.workspaceId}\n${actor.role ?? actor.type}\n${request.url}`, version, at: deps.clock.now().getTime() };
  }
}
