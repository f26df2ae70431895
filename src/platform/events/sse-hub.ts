import { inTenant } from '../../platform/db/scope.js';
import { Gauge } from 'prom-client';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { DatabaseHandle } from '../db/database.js';
import type { Metrics } from '../metrics.js';
import { unavailable } from '../http/errors.js';
import { EVENTS_CHANNEL } from './outbox.js';
import { SeqGaps } from './seq-gaps.js';

/**
 * The process's fan-out of outbox events to Server-Sent-Events clients.
 *
 * One hub per app (process). It listens once on `cg_events` (NOTIFY on commit; PGlite's own listen in
 * the embedded database), and on each wake-up reads the outbox rows after the last one it saw in one
 * query, then hands each row to the connected clients of the same tenant and workspace. Notifications
 * can be lost (the LISTEN connection dropped and reconnected, a notification queue overflow), so a
 * periodic check wakes the hub as well; a missed event is late, never lost.
 *
 * Scope rule: an event with `workspace_id` NULL is tenant-wide and goes to every workspace of its
 * tenant; any other event goes only to clients whose token is scoped to that workspace.
 *
 * Ordering: rows are read in `seq` order, but a transaction that took lower seqs can commit after one
 * that took higher ones. The hub remembers the seqs it skipped (SeqGaps) and picks them up when they
 * commit, delivering them late (out of seq order). Holes older than `gapRetentionMs` are given up:
 * rolled-back transactions leave them forever.
 *
 * Memory: the hub holds no queue. It reads at most `pageSize` rows at a time and payloads only of
 * the event types and tenants that connected clients want; each client bounds its own buffer.
 */
export interface StreamFilter {
  tenantId: string;
  workspaceId: string;
  types: ReadonlySet<string>;
}

export interface StreamEvent {
  seq: number;
  tenantId: string;
  workspaceId: string | null;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** A connected client as the hub sees it. `deliver` must not block: the hub calls it synchronously. */
export interface HubClient {
  readonly filter: StreamFilter;
  deliver(event: StreamEvent): void;
  /** The hub is shutting down (or the client failed): end the stream with this reason. */
  terminate(reason: string): void;
}

export interface HubSubscription {
  /**
   * The hub's read position when the client joined: every event with a higher seq reaches the client
   * live, and so do late commits below it.
   */
  position: number;
  unsubscribe(): void;
}

export interface SseHubOptions {
  /** Catch-up check when no notification came (lost notifications, reconnects). Default 5 s. */
  pollIntervalMs?: number;
  /** Rows read per query. Default 1,000. */
  pageSize?: number;
  /** How long a skipped seq is looked for again before it is taken for a rollback. Default 10 min. */
  gapRetentionMs?: number;
  /** At most this many hole ranges are tracked. Default 10,000. */
  maxGapRanges?: number;
  /** On start, holes among the last this many seqs are tracked (in-flight transactions). Default 10,000. */
  startWindow?: number;
}

export interface SseHub {
  readonly clientCount: number;
  subscribe(client: HubClient): Promise<HubSubscription>;
  /** Events of the filter with seq > after, oldest first, at most `limit` (a client catching up). */
  readAfter(filter: StreamFilter, after: number, limit: number): Promise<StreamEvent[]>;
  /**
   * The newest events of the filter with seq > after, oldest first: at most `maxEvents`, none created
   * more than `maxAgeMs` ago. `truncated` says that older ones were left out; `newestSeq` is the
   * newest matching seq, replayed or not.
   */
  readLatest(filter: StreamFilter, after: number, bound: { maxEvents: number; maxAgeMs: number }): Promise<{ events: StreamEvent[]; truncated: boolean; newestSeq: number | null }>;
  /** Ends every client's stream and stops listening and polling. */
  close(): Promise<void>;
}

/** What the hub uses of the app's dependencies (the platform does not import src/deps.ts). */
type HubDeps = { database: DatabaseHandle; clock: Clock; log: Logger; metrics: Metrics };

interface OutboxRow {
  seq: number | string;
  tenant_id: string;
  workspace_id: string | null;
  type: string;
  data: Record<string, unknown> | null;
  created_at: Date | string;
}

const CLIENTS_METRIC = 'controlgraph_sse_clients';

export function createSseHub(deps: HubDeps, options: SseHubOptions = {}): SseHub {
  return new Hub(deps, {
    pollIntervalMs: options.pollIntervalMs ?? 5_000,
    pageSize: options.pageSize ?? 1_000,
    gapRetentionMs: options.gapRetentionMs ?? 10 * 60_000,
    maxGapRanges: options.maxGapRanges ?? 10_000,
    startWindow: options.startWindow ?? 10_000,
  });
}

const hubs = new WeakMap<object, SseHub>();

/**
 * The app's hub: created by the first stream route that asks, closed in `preClose` (open streams
 * would otherwise keep `server.close()` waiting). Keyed by the app's HTTP server, which every
 * encapsulated context of one app shares.
 */
export function sseHubFor(app: FastifyInstance, deps: HubDeps, options?: SseHubOptions): SseHub {
  let hub = hubs.get(app.server);
  if (!hub) {
    const created = createSseHub(deps, options);
    hubs.set(app.server, created);
    app.addHook('preClose', async () => {
      await created.close();
    });
    hub = created;
  }
  return hub;
}

/** The hub of an app if a stream route created one (metrics, tests). */
export function existingSseHub(app: FastifyInstance): SseHub | undefined {
  return hubs.get(app.server);
}

class Hub implements SseHub {
  private readonly byTenant = new Map<string, Set<HubClient>>();
  private count = 0;
  private readonly gaps: SeqGaps;
  private readonly log: HubDeps['log'];
  private cursor = 0;
  /** The cursor is re-read from the table when the first client joins after an idle spell. */
  private stale = true;
  private started: Promise<void> | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Database work runs one piece at a time: reads, (re)starts and joins see one cursor. */
  private queue: Promise<unknown> = Promise.resolve();
  private pumpQueued = false;

  constructor(
    private readonly deps: HubDeps,
    private readonly options: Required<SseHubOptions>,
  ) {
    this.gaps = new SeqGaps(options.maxGapRanges);
    this.log = deps.log.child({ component: 'sse-hub' });
    const registry = deps.metrics.registry;
    if (!registry.getSingleMetric(CLIENTS_METRIC)) {
      const clients = () => this.count;
      new Gauge({
        name: CLIENTS_METRIC,
        help: 'Connected Server-Sent-Events clients',
        registers: [registry],
        collect() {
          this.set(clients());
        },
      });
    }
  }

  get clientCount(): number {
    return this.count;
  }

  async subscribe(client: HubClient): Promise<HubSubscription> {
    if (this.closed) throw unavailable('server shutting down');
    await this.start();
    return this.serial(async () => {
      if (this.closed) throw unavailable('server shutting down');
      if (this.stale) {
        await this.resetCursor();
        this.stale = false;
      }
      const { tenantId } = client.filter;
      let set = this.byTenant.get(tenantId);
      if (!set) this.byTenant.set(tenantId, (set = new Set()));
      set.add(client);
      this.count++;
      let joined = true;
      return {
        position: this.cursor,
        unsubscribe: () => {
          if (!joined) return;
          joined = false;
          const current = this.byTenant.get(tenantId);
          if (current?.delete(client)) {
            this.count--;
            if (current.size === 0) this.byTenant.delete(tenantId);
          }
          // Nobody listens: stop tracking; the next client starts from the table's end again.
          if (this.count === 0) this.stale = true;
        },
      };
    });
  }

  async readAfter(filter: StreamFilter, after: number, limit: number): Promise<StreamEvent[]> {
    const rows = await this.scoped(filter, after).orderBy('seq', 'asc').limit(limit).execute();
    return rows.map(toEvent);
  }

  async readLatest(filter: StreamFilter, after: number, bound: { maxEvents: number; maxAgeMs: number }) {
    // Newest first with one row more than allowed: a full page means older events were left out.
    const rows = await this.scoped(filter, after)
      .orderBy('seq', 'desc')
      .limit(bound.maxEvents + 1)
      .execute();
    const cutoff = this.deps.clock.now().getTime() - bound.maxAgeMs;
    const events: StreamEvent[] = [];
    for (const row of rows.slice(0, bound.maxEvents)) {
      const event = toEvent(row);
      if (event.createdAt.getTime() < cutoff) break;
      events.push(event);
    }
    const newest = rows[0];
    return { events: events.reverse(), truncated: events.length < rows.length, newestSeq: newest ? Number(newest.seq) : null };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = null;
    for (const set of [...this.byTenant.values()]) {
      for (const client of [...set]) safely(() => client.terminate('server shutting down, reconnect'), this.log);
    }
    this.byTenant.clear();
    this.count = 0;
    await this.started?.catch(() => undefined);
    await this.unlisten?.().catch(() => undefined);
    this.unlisten = null;
    await this.queue;
  }

  private scoped(filter: StreamFilter, after: number) {
    return this.deps.database.db
      .selectFrom('outbox_events')
      .select(['seq', 'tenant_id', 'workspace_id', 'type', 'data', 'created_at'])
      .where(inTenant(filter.tenantId))
      .where((eb) => eb.or([eb('workspace_id', '=', filter.workspaceId), eb('workspace_id', 'is', null)]))
      .where('type', 'in', [...filter.types])
      .where('seq', '>', String(after));
  }

  private start(): Promise<void> {
    this.started ??= (async () => {
      this.unlisten = await this.deps.database.notifier.listen(EVENTS_CHANNEL, () => this.wake());
      if (this.closed) {
        await this.unlisten();
        this.unlisten = null;
        return;
      }
      this.pollTimer = setInterval(() => this.wake(), this.options.pollIntervalMs);
      this.pollTimer.unref();
    })().catch((error: unknown) => {
      // The next client tries again.
      this.started = null;
      throw error;
    });
    return this.started;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Coalesces wake-ups: at most one read is waiting behind the running one. */
  private wake(): void {
    if (this.closed || this.pumpQueued) return;
    this.pumpQueued = true;
    this.serial(async () => {
      this.pumpQueued = false;
      await this.drain();
    }).catch((error: unknown) => {
      // The next notification or poll tries again from the same cursor.
      this.log.warn({ err: error }, 'reading outbox events for the stream failed');
    });
  }

  /** Starts at the table's end and takes the recent holes for transactions still in flight. */
  private async resetCursor(): Promise<void> {
    const { rows } = await sql<{ seq: number | string }>`
      SELECT seq FROM outbox_events
      WHERE seq > (SELECT coalesce(max(seq), 0) FROM outbox_events) - ${this.options.startWindow}
      ORDER BY seq`.execute(this.deps.database.db);
    this.gaps.clear();
    const seqs = rows.map((r) => Number(r.seq));
    const last = seqs.at(-1) ?? 0;
    const now = this.deps.clock.now().getTime();
    let previous = Math.max(0, last - this.options.startWindow);
    for (const seq of seqs) {
      this.gaps.add(previous + 1, seq - 1, now);
      previous = seq;
    }
    this.cursor = last;
  }

  private async drain(): Promise<void> {
    while (!this.closed && this.count > 0 && !this.stale) {
      const full = await this.readPage();
      if (!full) return;
    }
  }

  /** One query: new rows after the cursor and rows that filled holes; payloads only where wanted. */
  private async readPage(): Promise<boolean> {
    const now = this.deps.clock.now().getTime();
    const expired = this.gaps.expire(now - this.options.gapRetentionMs);
    if (expired) this.log.debug({ ranges: expired }, 'outbox seq holes given up');
    const types = new Set<string>();
    for (const set of this.byTenant.values()) for (const client of set) for (const type of client.filter.types) types.add(type);
    const tenants = [...this.byTenant.keys()];
    const lows = this.gaps.ranges.map((g) => g.from);
    const highs = this.gaps.ranges.map((g) => g.to);
    const { pageSize } = this.options;
    const { rows } = await sql<OutboxRow>`
      SELECT seq, tenant_id, workspace_id, type, created_at,
        CASE WHEN type = ANY(${[...types]}::text[]) AND tenant_id = ANY(${tenants}::uuid[]) THEN data END AS data
      FROM outbox_events WHERE seq > ${this.cursor}
      UNION ALL
      SELECT o.seq, o.tenant_id, o.workspace_id, o.type, o.created_at,
        CASE WHEN o.type = ANY(${[...types]}::text[]) AND o.tenant_id = ANY(${tenants}::uuid[]) THEN o.data END AS data
      FROM unnest(${lows}::bigint[], ${highs}::bigint[]) AS g(lo, hi)
      JOIN outbox_events o ON o.seq BETWEEN g.lo AND g.hi
      ORDER BY seq
      LIMIT ${pageSize}`.execute(this.deps.database.db);
    if (this.closed) return false;
    for (const row of rows) {
      const seq = Number(row.seq);
      if (seq <= this.cursor) {
        this.gaps.fill(seq);
      } else {
        const dropped = this.gaps.add(this.cursor + 1, seq - 1, now);
        if (dropped) this.log.warn({ ranges: dropped }, 'too many outbox seq holes: the oldest are given up');
        this.cursor = seq;
      }
      if (row.data !== null) this.fanOut(toEvent(row));
    }
    return rows.length === pageSize;
  }

  private fanOut(event: StreamEvent): void {
    const set = this.byTenant.get(event.tenantId);
    if (!set) return;
    for (const client of [...set]) {
      const { workspaceId, types } = client.filter;
      if (!types.has(event.type)) continue;
      if (event.workspaceId !== null && event.workspaceId !== workspaceId) continue;
      safely(
        () => client.deliver(event),
        this.log,
        () => client.terminate('internal error, reconnect'),
      );
    }
  }
}

function toEvent(row: Omit<OutboxRow, 'data'> & { data: unknown }): StreamEvent {
  return {
    seq: Number(row.seq),
    tenantId: row.tenant_id,
    workspaceId: row.workspace_id,
    type: row.type,
    data: (row.data ?? {}) as Record<string, unknown>,
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
  };
}

function safely(work: () => void, log: HubDeps['log'], onError?: () => void): void {
  try {
    work();
  } catch (error) {
    log.error({ err: error }, 'stream client failed');
    if (onError) safely(onError, log);
  }
}
