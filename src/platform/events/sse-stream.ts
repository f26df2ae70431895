import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HubClient, SseHub, StreamEvent, StreamFilter } from './sse-hub.js';

/**
 * One Server-Sent-Events response fed by the hub.
 *
 * Wire format: `retry: <ms>` first, then per event `id: <seq>` and `data: <json>` (no `event:` line:
 * the event name is inside the JSON), `: heartbeat` comments, and a lone `id:` line that sets the
 * resume position of a fresh client. `id` is the stream position (the highest outbox seq sent), so a
 * late-committed event with a lower seq repeats the current position rather than moving it back.
 *
 * Resume: with `Last-Event-ID: n` the newest events after n are replayed first, at most
 * `replayMaxEvents` of them and none older than `replayMaxAgeMs`; a comment says when older ones were
 * left out (the client should reload the list). Live events at or below n are not sent again.
 *
 * Slow clients: beyond `maxBufferedBytes` in the socket's buffer the client stops taking live events
 * and, once its socket drains, catches up from the database page by page, so a burst (an audit's
 * thousands of findings) costs bounded memory and still arrives complete. A client whose buffer stays
 * full for `slowClientTimeoutMs` is told why in a last comment and disconnected; if it does not read
 * that comment within `closeGraceMs` its socket is destroyed.
 *
 * Known limit: an event whose transaction commits after the client has moved past its seq (while the
 * client is disconnected or catching up) is not replayed; clients that must see everything reload the
 * list after a reconnect.
 */
export interface EventStreamOptions {
  heartbeatMs: number;
  retryMs: number;
  maxBufferedBytes: number;
  slowClientTimeoutMs: number;
  /** How long a dropped slow client gets to read the rest of its buffer before its socket is destroyed. */
  closeGraceMs: number;
  replayMaxEvents: number;
  replayMaxAgeMs: number;
  /** Events read per query when a client catches up. */
  catchUpPageSize: number;
  /** Live events held while the client catches up; beyond them it reads the database once more. */
  maxPendingEvents: number;
}

export const defaultEventStreamOptions: EventStreamOptions = {
  heartbeatMs: 15_000,
  retryMs: 3_000,
  maxBufferedBytes: 1024 * 1024,
  slowClientTimeoutMs: 30_000,
  closeGraceMs: 30_000,
  replayMaxEvents: 1_000,
  replayMaxAgeMs: 24 * 60 * 60_000,
  catchUpPageSize: 500,
  maxPendingEvents: 1_000,
};

export interface EventStreamSpec {
  filter: StreamFilter;
  /** The Last-Event-ID the client sent, null for a fresh stream. */
  lastEventId: number | null;
  /** The message a client receives for an event; null leaves the event out. */
  format(event: StreamEvent): unknown;
}

/**
 * Serves the stream on a hijacked reply. Joins the hub before answering, so a failure to join is an
 * ordinary error response; everything after the headers ends the stream instead (the client reconnects).
 */
export async function serveEventStream(
  hub: SseHub,
  request: FastifyRequest,
  reply: FastifyReply,
  spec: EventStreamSpec,
  options: EventStreamOptions = defaultEventStreamOptions,
): Promise<void> {
  const client = new StreamClient(reply.raw, spec, options, hub, request.log);
  const subscription = await hub.subscribe(client);
  // The authenticator's headers (x-request-id, rate limits) are written by hand after the hijack.
  const headers: Record<string, number | string | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
  });
  client.begin(subscription);
}

type Mode = 'joining' | 'live' | 'behind' | 'closed';

class StreamClient implements HubClient {
  private mode: Mode = 'joining';
  /** Live events that arrived while the client was reading the database. */
  private pending: StreamEvent[] = [];
  private pendingOverflow = false;
  /** Events at or below this seq were sent (or belonged to the previous connection): skip them. */
  private floor = 0;
  /** The highest seq sent: where a catch-up continues. */
  private highest = 0;
  /** The last `id:` written. */
  private position = -1;
  private unsubscribe: () => void = () => undefined;
  private heartbeat: NodeJS.Timeout | null = null;
  private slowTimer: NodeJS.Timeout | null = null;
  private drainWaiters: Array<() => void> = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly spec: EventStreamSpec,
    private readonly options: EventStreamOptions,
    private readonly hub: SseHub,
    private readonly log: FastifyRequest['log'],
  ) {}

  get filter(): StreamFilter {
    return this.spec.filter;
  }

  begin(subscription: { position: number; unsubscribe(): void }): void {
    this.unsubscribe = subscription.unsubscribe;
    if (this.mode === 'closed') {
      // The hub shut down between the join and the headers.
      subscription.unsubscribe();
      this.res.end(': server shutting down, reconnect\n\n');
      return;
    }
    if (this.res.destroyed || this.res.socket?.destroyed !== false) {
      this.close();
      return;
    }
    this.res.on('close', () => this.close());
    this.res.on('drain', () => this.onDrain());
    this.write(`retry: ${this.options.retryMs}\n\n`);
    this.heartbeat = setInterval(() => {
      if (this.mode !== 'closed' && !this.res.writableNeedDrain) this.write(': heartbeat\n\n');
    }, this.options.heartbeatMs);
    this.heartbeat.unref();
    this.join(subscription.position).catch((error: unknown) => this.fail(error));
  }

  deliver(event: StreamEvent): void {
    switch (this.mode) {
      case 'joining':
        // Held until the database read is done; beyond the bound, the database is read once more.
        if (this.pending.length >= this.options.maxPendingEvents) {
          this.pending = [];
          this.pendingOverflow = true;
        } else if (!this.pendingOverflow) {
          this.pending.push(event);
        }
        return;
      case 'live':
        if (event.seq <= this.floor) return;
        this.send(event);
        if (this.res.writableLength > this.options.maxBufferedBytes) {
          // Stop taking live events; read them from the database once the socket has drained.
          this.mode = 'behind';
          this.recover().catch((error: unknown) => this.fail(error));
        }
        return;
      default:
        return;
    }
  }

  terminate(reason: string): void {
    this.close(reason);
  }

  private async join(position: number): Promise<void> {
    const lastEventId = this.spec.lastEventId;
    if (lastEventId === null) {
      // A fresh client: its resume point is the hub's position; late commits below it still arrive.
      this.writePosition(position);
      this.goLive();
      return;
    }
    this.floor = lastEventId;
    this.highest = lastEventId;
    this.position = lastEventId;
    const { events, truncated, newestSeq } = await this.hub.readLatest(this.filter, lastEventId, {
      maxEvents: this.options.replayMaxEvents,
      maxAgeMs: this.options.replayMaxAgeMs,
    });
    if (this.isClosed()) return;
    if (truncated) {
      this.write(
        `: some events after ${lastEventId} are not replayed (more than ${this.options.replayMaxEvents} or older than ` +
          `${Math.round(this.options.replayMaxAgeMs / 3_600_000)} h): reload the list\n\n`,
      );
    }
    for (const event of events) this.send(event);
    // Events left out stay left out: the catch-up continues after the newest one seen.
    if (newestSeq !== null && newestSeq > this.highest) this.highest = newestSeq;
    await this.catchUp();
  }

  /** Reads the database after `highest` until it has all, then sends what arrived meanwhile. */
  private async catchUp(): Promise<void> {
    do {
      this.pendingOverflow = false;
      this.pending = [];
      for (;;) {
        if (this.res.writableLength > this.options.maxBufferedBytes) await this.drained();
        if (this.isClosed()) return;
        const events = await this.hub.readAfter(this.filter, this.highest, this.options.catchUpPageSize);
        if (this.isClosed()) return;
        for (const event of events) this.send(event);
        if (events.length < this.options.catchUpPageSize) break;
      }
    } while (this.pendingOverflow);
    this.floor = Math.max(this.floor, this.highest);
    this.goLive();
  }

  private goLive(): void {
    const pending = this.pending;
    this.pending = [];
    this.mode = 'live';
    for (const event of pending) this.deliver(event);
  }

  private async recover(): Promise<void> {
    await this.drained();
    if (this.isClosed()) return;
    this.mode = 'joining';
    await this.catchUp();
  }

  private send(event: StreamEvent): void {
    const message = this.spec.format(event);
    if (event.seq > this.highest) this.highest = event.seq;
    if (message === null || message === undefined) return;
    const id = Math.max(this.position, event.seq);
    this.position = id;
    this.write(`id: ${id}\ndata: ${JSON.stringify(message)}\n\n`);
  }

  private writePosition(seq: number): void {
    if (seq <= this.position) return;
    this.position = seq;
    this.write(`id: ${seq}\n\n`);
  }

  private write(chunk: string): void {
    if (this.isClosed()) return;
    const ok = this.res.write(chunk);
    if (!ok && !this.slowTimer) {
      this.slowTimer = setTimeout(() => {
        this.slowTimer = null;
        const seconds = Math.round(this.options.slowClientTimeoutMs / 1000);
        this.close(`closing: client too slow, send buffer full for ${seconds} s`, true);
      }, this.options.slowClientTimeoutMs);
      this.slowTimer.unref();
    }
  }

  private onDrain(): void {
    if (this.slowTimer) clearTimeout(this.slowTimer);
    this.slowTimer = null;
    this.releaseWaiters();
  }

  private drained(): Promise<void> {
    if (!this.res.writableNeedDrain || this.isClosed()) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private releaseWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private isClosed(): boolean {
    return this.mode === 'closed';
  }

  private fail(error: unknown): void {
    if (this.isClosed()) return;
    this.log.warn({ err: error }, 'event stream failed');
    this.close('stream error, reconnect');
  }

  /**
   * Ends the stream, with a last comment when there is a reason. A slow client (or one with unsent
   * data) may never take the rest of its buffer: it gets `closeGraceMs`, then its socket is destroyed.
   */
  private close(reason?: string, slow = false): void {
    if (this.mode === 'closed') return;
    this.mode = 'closed';
    this.unsubscribe();
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.slowTimer) clearTimeout(this.slowTimer);
    this.heartbeat = null;
    this.slowTimer = null;
    this.pending = [];
    this.releaseWaiters();
    const res = this.res;
    if (!res.headersSent || res.writableEnded || res.destroyed) return;
    // Held before end(): the response lets go of its socket once it has finished.
    const socket = res.socket;
    const unsent = slow || res.writableNeedDrain;
    res.end(reason ? `: ${reason}\n\n` : undefined);
    if (unsent && socket) {
      // The response may finish into the kernel's buffers while the client still reads nothing, and
      // then the connection would idle on as keep-alive: the grace is on the socket, not the response.
      const kill = setTimeout(() => socket.destroy(), this.options.closeGraceMs);
      kill.unref();
      socket.once('close', () => clearTimeout(kill));
    }
  }
}
