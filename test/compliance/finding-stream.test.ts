import http from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { dbKind } from '../harness/database.js';
import { deferred } from '../harness/deferred.js';
import { buildTenant, call, createApiKey, type Session, type TenantFixture } from '../harness/identity.js';
import { buildApp } from '../../src/app.js';
import { assembleDeps } from '../../src/runtime.js';
import { createMetrics } from '../../src/platform/metrics.js';
import type { Module } from '../../src/modules/module.js';
import type { Database } from '../../src/platform/db/schema.js';
import { json } from '../../src/platform/db/schema.js';
import { emitEvents, type NewEvent } from '../../src/platform/events/outbox.js';
import { existingSseHub } from '../../src/platform/events/sse-hub.js';
import { createFindingStreamRoutes, type FindingStreamOptions } from '../../src/modules/compliance/stream-routes.js';

/**
 * GET /tenants/{id}/findings/stream over real sockets (app.inject does not stream). The main app polls
 * the outbox only once a minute, so what it delivers came through NOTIFY; a "tuned" app with a short
 * poll and a small send buffer covers missed notifications and slow clients.
 */
/**
 * The route under test, mounted under its own prefix: its intervals are the test's, and it does not
 * clash with the same route wired into the compliance module.
 */
const PREFIX = '/stream-test';
const streamModule = (options: FindingStreamOptions): Module => ({
  name: 'stream-test',
  routes: async (app, opts) => {
    await app.register(createFindingStreamRoutes(options), { ...opts, prefix: PREFIX });
  },
});

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let base: string;
let reader: Session;
const extraApps: FastifyInstance[] = [];
const openStreams = new Set<SseStream>();

beforeAll(async () => {
  t = await createTestApp({ extraModules: [streamModule({ heartbeatMs: 200, hub: { pollIntervalMs: 60_000 } })] });
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  reader = tenant.users['read-only'];
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterEach(() => {
  for (const stream of openStreams) stream.close();
});
afterAll(async () => {
  for (const app of extraApps) await app.close();
  await t.close();
});

/** Another app (process) on the same database: its own connections and LISTEN on PostgreSQL. */
async function anotherApp(options: FindingStreamOptions): Promise<{ app: FastifyInstance; base: string }> {
  const handle = t.db.kind === 'postgres' ? await t.db.openAnother() : t.db.handle;
  // Tokens come from the main app; the authenticator is part of every app, so no other module is needed.
  const app = await buildApp(assembleDeps(t.deps.config, handle, t.clock, t.deps.log, createMetrics()), {
    modules: [streamModule(options)],
  });
  extraApps.push(app);
  return { app, base: await app.listen({ port: 0, host: '127.0.0.1' }) };
}

// ---------------------------------------------------------------------------------------------
// A small SSE reader over node:http.

interface Frame {
  id?: string;
  data?: string;
  retry?: string;
  comments: string[];
}

class SseStream {
  frames: Frame[] = [];
  /** Frames with data so far (cheap to check on every chunk). */
  dataFrames = 0;
  ended = false;
  private buffer = '';
  private listeners = new Set<() => void>();

  constructor(
    readonly res: http.IncomingMessage,
    private readonly req: http.ClientRequest,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\n\n')) !== -1) {
        const frame = parseFrame(this.buffer.slice(0, end));
        this.frames.push(frame);
        if (frame.data !== undefined) this.dataFrames++;
        this.buffer = this.buffer.slice(end + 2);
      }
      this.notify();
    });
    const finish = () => {
      this.ended = true;
      openStreams.delete(this);
      this.notify();
    };
    res.on('end', finish);
    res.on('close', finish);
    res.on('error', finish);
  }

  /** The data frames, with their id and parsed JSON. */
  get messages(): Array<{ id: number; message: Record<string, any> }> {
    return this.frames.filter((f) => f.data !== undefined).map((f) => ({ id: Number(f.id), message: JSON.parse(f.data!) }));
  }

  get comments(): string[] {
    return this.frames.flatMap((f) => f.comments);
  }

  async until(check: (stream: this) => boolean, timeoutMs = 5_000, what = 'condition'): Promise<void> {
    if (check(this)) return;
    const done = deferred();
    const listener = () => {
      if (check(this)) done.resolve();
      else if (this.ended) done.reject(new Error(`stream ended before ${what}; frames: ${JSON.stringify(this.frames.slice(-5))}`));
    };
    const timer = setTimeout(() => done.reject(new Error(`timed out waiting for ${what}; last frames: ${JSON.stringify(this.frames.slice(-5))}`)), timeoutMs);
    this.listeners.add(listener);
    try {
      await done.promise;
    } finally {
      clearTimeout(timer);
      this.listeners.delete(listener);
    }
  }

  untilMessages(count: number, timeoutMs?: number): Promise<void> {
    return this.until((s) => s.dataFrames >= count, timeoutMs, `${count} messages`);
  }

  close(): void {
    this.req.destroy();
    openStreams.delete(this);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

function parseFrame(block: string): Frame {
  const frame: Frame = { comments: [] };
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) frame.comments.push(line.slice(1).trim());
    else {
      const colon = line.indexOf(':');
      const field = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id' || field === 'data' || field === 'retry') frame[field] = value;
    }
  }
  return frame;
}

/** Opens the stream; resolves once the stream has its resume position (or with the error response). */
async function open(token: string, options: { base?: string; tenantId?: string; lastEventId?: number | string; waitReady?: boolean } = {}): Promise<SseStream> {
  const url = `${options.base ?? base}/api/v1${PREFIX}/tenants/${options.tenantId ?? tenant.id}/findings/stream`;
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const response = deferred<{ res: http.IncomingMessage; req: http.ClientRequest }>();
  const req = http.get(url, { headers, agent: false }, (res) => response.resolve({ res, req }));
  req.on('error', (error) => response.reject(error));
  const { res } = await response.promise;
  if (res.statusCode !== 200) {
    let body = '';
    for await (const chunk of res) body += chunk;
    throw new Error(`stream answered ${res.statusCode}: ${body}`);
  }
  const stream = new SseStream(res, req);
  openStreams.add(stream);
  // A fresh stream announces its position with a lone id line; a resumed one starts with retry.
  if (options.waitReady !== false) {
    await stream.until((s) => (options.lastEventId === undefined ? s.frames.some((f) => f.id !== undefined) : s.frames.length > 0), 5_000, 'the stream to start');
  }
  return stream;
}

// ---------------------------------------------------------------------------------------------
// Events as the audit engine writes them.

type Scope = { tenantId: string; workspaceId: string | null };
let counter = 0;

function finding(label = `f${++counter}`) {
  return {
    id: `aws-s3-public-access:aws:us-east-1:aws.s3.bucket:${label}`,
    rule_id: 'aws-s3-public-access',
    framework: 'cis-aws',
    control_id: '2.1.4',
    severity: 'HIGH',
    title: 'S3 bucket allows public access',
    description: `Bucket ${label} has public access block disabled`,
    resource_id: `aws:us-east-1:aws.s3.bucket:${label}`,
    resource_type: 'aws.s3.bucket',
    resource_name: label,
    region: 'us-east-1',
    remediation: 'Enable S3 Block Public Access on the bucket',
    created_at: '2026-11-23T12:00:00.000Z',
  };
}

const created = (scope: Scope, f = finding()): NewEvent => ({ ...scope, type: 'finding.created', data: { finding: f } });
const resolved = (scope: Scope, findingId: string): NewEvent => ({
  ...scope,
  type: 'finding.resolved',
  data: { finding_id: findingId, resolved_at: '2026-11-23T13:00:00.000Z', rule_id: 'aws-s3-public-access', resource_id: 'x', resolved_by: 'audit' },
});

async function emit(events: NewEvent[], db: Kysely<Database> = t.deps.database.db): Promise<number[]> {
  await db.transaction().execute((trx) => emitEvents(trx, t.clock, events));
  const rows = await db.selectFrom('outbox_events').select('seq').orderBy('seq', 'desc').limit(events.length).execute();
  return rows.map((r) => Number(r.seq)).reverse();
}

function scopeOf(session: Session): Scope {
  return { tenantId: session.tenant_id, workspaceId: session.workspace_id };
}

async function eventually(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// ---------------------------------------------------------------------------------------------

describe('finding stream: wire format', () => {
  it('sends the headers, retry advice, a resume position and both event shapes with id lines', async () => {
    const stream = await open(reader.token);
    const { headers } = stream.res;
    expect(headers['content-type']).toMatch(/^text\/event-stream/);
    expect(headers['cache-control']).toBe('no-cache');
    expect(headers['x-accel-buffering']).toBe('no');
    expect(headers['x-request-id']).toBeTruthy();
    expect(stream.frames[0]).toEqual({ retry: '3000', comments: [] });
    const position = stream.frames.find((f) => f.id !== undefined)!;
    expect(position.data).toBeUndefined();

    const scope = scopeOf(reader);
    const f = finding();
    const noise: NewEvent = { ...scope, type: 'finding.severity_changed', data: { finding_id: f.id, severity: 'LOW' } };
    const seqs = await emit([created(scope, f), noise, resolved(scope, f.id)]);
    await stream.untilMessages(2);
    expect(Number(position.id)).toBeLessThan(seqs[0]!);
    expect(stream.messages).toEqual([
      { id: seqs[0], message: { event: 'finding.created', finding: f } },
      { id: seqs[2], message: { event: 'finding.resolved', finding_id: f.id, resolved_at: '2026-11-23T13:00:00.000Z' } },
    ]);
    // Raw lines as the spec shows them: `id: <seq>` then `data: <json>`.
    expect(stream.frames.filter((f) => f.data).every((f) => /^\d+$/.test(f.id!))).toBe(true);
  });

  it('sends a heartbeat comment on the configured interval', async () => {
    const stream = await open(reader.token);
    await stream.until((s) => s.comments.filter((c) => c === 'heartbeat').length >= 2, 3_000, 'two heartbeats');
  });

  it('a key with findings:read may stream', async () => {
    const { key } = await createApiKey(t, tenant, { permissions: ['findings:read'] });
    const stream = await open(key);
    const seqs = await emit([created({ tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId })]);
    await stream.untilMessages(1);
    expect(stream.messages[0]!.id).toBe(seqs[0]);
  });
});

describe('finding stream: access', () => {
  const url = () => `/api/v1${PREFIX}/tenants/${tenant.id}/findings/stream`;

  it('401 without a token', async () => {
    const res = await t.app.inject({ method: 'GET', url: url() });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('UNAUTHORIZED');
  });

  it('403 to a key without findings:read', async () => {
    const { key } = await createApiKey(t, tenant, { permissions: ['nodes:read'] });
    const res = await call(t.app, key, { url: url(), expect: 403 });
    expect(res.json().error.message).toBe('missing permission findings:read');
  });

  it("403 for another tenant's path", async () => {
    await call(t.app, other.users['read-only'].token, { url: url(), expect: 403 });
    await call(t.app, other.admin.token, { url: url(), expect: 403 });
  });

  it('400 for a malformed Last-Event-ID', async () => {
    await call(t.app, reader.token, { url: url(), headers: { 'last-event-id': 'abc' }, expect: 400 });
  });

  it('is documented as text/event-stream with its operation id', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const operation = doc.paths[`/api/v1${PREFIX}/tenants/{tenantID}/findings/stream`].get;
    expect(operation.operationId).toBe('streamFindings');
    expect(operation.tags).toEqual(['findings']);
    expect(operation.responses['200'].content['text/event-stream']).toBeDefined();
    expect(operation['x-permission']).toBe('findings:read');
  });
});

describe('finding stream: scope', () => {
  it("never delivers another tenant's or another workspace's events; tenant-wide ones reach every workspace", async () => {
    const ws = await call(t.app, tenant.admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: `ws-${randomUUID()}` }, expect: 201 });
    const workspaceB = ws.json().id as string;
    const inB = (await call(t.app, reader.token, { method: 'POST', url: '/api/v1/auth/switch-workspace', payload: { workspace_id: workspaceB }, expect: 200 })).json() as Session;
    const inA = await open(reader.token);
    const streamB = await open(inB.token);
    const ofOther = await open(other.users['read-only'].token, { tenantId: other.id });

    const fA = finding();
    const fB = finding();
    const fOther = finding();
    const tenantWide = resolved({ tenantId: tenant.id, workspaceId: null }, 'tenant-wide');
    const seqs = await emit([
      created({ tenantId: other.id, workspaceId: other.defaultWorkspaceId }, fOther),
      created({ tenantId: tenant.id, workspaceId: workspaceB }, fB),
      tenantWide,
      created(scopeOf(reader), fA),
    ]);
    await inA.untilMessages(2);
    await streamB.untilMessages(2);
    await ofOther.untilMessages(1);
    // The marker (last event) arrived, and events are handed out in seq order: nothing else will come.
    expect(inA.messages.map((m) => m.id)).toEqual([seqs[2], seqs[3]]);
    expect(inA.messages[1]!.message.finding.id).toBe(fA.id);
    expect(streamB.messages.map((m) => m.id)).toEqual([seqs[1], seqs[2]]);
    expect(streamB.messages[0]!.message.finding.id).toBe(fB.id);
    expect(ofOther.messages).toEqual([{ id: seqs[0], message: { event: 'finding.created', finding: fOther } }]);
  });
});

describe('finding stream: resume', () => {
  it('with Last-Event-ID replays exactly the missed events of its scope, then continues live', async () => {
    const scope = scopeOf(reader);
    const first = await open(reader.token);
    await emit([created(scope)]);
    await first.untilMessages(1);
    const lastId = first.messages[0]!.id;
    first.close();

    const missed = [finding(), finding()];
    const seqs = await emit([
      created(scope, missed[0]),
      created({ tenantId: other.id, workspaceId: other.defaultWorkspaceId }),
      resolved({ tenantId: tenant.id, workspaceId: randomUUID() }, 'elsewhere'),
      resolved(scope, missed[1]!.id),
    ]);
    const resumed = await open(reader.token, { lastEventId: lastId });
    await resumed.untilMessages(2);
    const live = finding();
    const [liveSeq] = await emit([created(scope, live)]);
    await resumed.untilMessages(3);
    expect(resumed.frames[0]!.retry).toBe('3000');
    expect(resumed.messages).toEqual([
      { id: seqs[0], message: { event: 'finding.created', finding: missed[0] } },
      { id: seqs[3], message: { event: 'finding.resolved', finding_id: missed[1]!.id, resolved_at: '2026-11-23T13:00:00.000Z' } },
      { id: liveSeq, message: { event: 'finding.created', finding: live } },
    ]);
    expect(resumed.comments.filter((c) => c !== 'heartbeat')).toEqual([]);
  });

  it('a fresh stream that saw no event resumes from the position it was given', async () => {
    const first = await open(reader.token);
    const position = Number(first.frames.find((f) => f.id !== undefined)!.id);
    first.close();
    const f = finding();
    const [seq] = await emit([created(scopeOf(reader), f)]);
    const resumed = await open(reader.token, { lastEventId: position });
    await resumed.untilMessages(1);
    expect(resumed.messages).toEqual([{ id: seq, message: { event: 'finding.created', finding: f } }]);
  });

  it('replays at most the newest 1,000 events and says that older ones were left out', async () => {
    const scope = scopeOf(reader);
    const start = await open(reader.token);
    const position = Number(start.frames.find((f) => f.id !== undefined)!.id);
    start.close();
    const events = Array.from({ length: 1_005 }, () => created(scope));
    const seqs = await emit(events);
    const resumed = await open(reader.token, { lastEventId: position });
    await resumed.untilMessages(1_000, 10_000);
    expect(resumed.messages.map((m) => m.id)).toEqual(seqs.slice(5));
    expect(resumed.comments.some((c) => c.includes('not replayed'))).toBe(true);
    const after = await emit([created(scope)]);
    await resumed.untilMessages(1_001);
    expect(resumed.messages.at(-1)!.id).toBe(after[0]);
  });

  it('replays nothing older than 24 hours', async () => {
    // A key: tokens would expire when the clock moves a day on.
    const { key } = await createApiKey(t, tenant, { permissions: ['findings:read'] });
    const scope = { tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId };
    const start = await open(key);
    const position = Number(start.frames.find((f) => f.id !== undefined)!.id);
    start.close();
    const before = t.clock.now();
    await emit([created(scope), created(scope)]);
    t.clock.advance(25 * 3_600_000);
    try {
      const fresh = finding();
      const [seq] = await emit([created(scope, fresh)]);
      const resumed = await open(key, { lastEventId: position });
      await resumed.untilMessages(1);
      expect(resumed.messages).toEqual([{ id: seq, message: { event: 'finding.created', finding: fresh } }]);
      expect(resumed.comments.some((c) => c.includes('not replayed'))).toBe(true);
    } finally {
      t.clock.set(before);
    }
  });
});

describe('finding stream: delivery', () => {
  it('reaches a client connected to another process; closing that process ends its streams', async () => {
    const second = await anotherApp({ hub: { pollIntervalMs: 60_000 } });
    const stream = await open(reader.token, { base: second.base });
    const f = finding();
    const [seq] = await emit([created(scopeOf(reader), f)]);
    await stream.untilMessages(1);
    expect(stream.messages).toEqual([{ id: seq, message: { event: 'finding.created', finding: f } }]);
    await second.app.close();
    await stream.until((s) => s.ended, 5_000, 'the end of the stream');
    expect(stream.comments).toContain('server shutting down, reconnect');
  });

  it('cleans up a client that disconnects', async () => {
    const hub = existingSseHub(t.app)!;
    await eventually(() => hub.clientCount === 0, 'earlier streams to be gone');
    const a = await open(reader.token);
    const b = await open(tenant.users.auditor.token);
    expect(hub.clientCount).toBe(2);
    const metric = await t.deps.metrics.registry.getSingleMetric('controlgraph_sse_clients')!.get();
    expect(metric.values[0]!.value).toBe(2);
    a.close();
    b.close();
    await eventually(() => hub.clientCount === 0, 'the hub to drop both clients');
  });

  it('delivers an event whose transaction took a lower seq but committed later', async () => {
    const db = t.deps.database.db;
    const stream = await open(reader.token);
    const scope = scopeOf(reader);
    // A reserved seq stands for a transaction still in flight.
    const reserved = await sql<{ seq: string }>`SELECT nextval(pg_get_serial_sequence('outbox_events', 'seq')) AS seq`.execute(db);
    const lowSeq = Number(reserved.rows[0]!.seq);
    const [highSeq] = await emit([created(scope)]);
    await stream.untilMessages(1);
    const late = finding();
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('outbox_events')
        .values({
          seq: String(lowSeq),
          id: randomUUID(),
          tenant_id: scope.tenantId,
          workspace_id: scope.workspaceId,
          type: 'finding.created',
          data: json({ finding: late }),
          created_at: t.clock.now(),
        })
        .execute();
      await sql`SELECT pg_notify('cg_events', ${scope.tenantId})`.execute(trx);
    });
    await stream.untilMessages(2);
    // Sent late, it keeps the stream position (the higher id) so a resume does not repeat events.
    expect(stream.messages[1]).toEqual({ id: highSeq, message: { event: 'finding.created', finding: late } });
  });

  it.runIf(dbKind() === 'postgres')('delivers events of concurrent transactions that commit out of seq order', async () => {
    const db = t.deps.database.db;
    const stream = await open(reader.token);
    const scope = scopeOf(reader);
    const inserted = deferred();
    const release = deferred();
    const slowFinding = finding();
    const slow = db.transaction().execute(async (trx) => {
      await emitEvents(trx, t.clock, [created(scope, slowFinding)]);
      inserted.resolve();
      await release.promise;
    });
    await inserted.promise;
    const quick = finding();
    await emit([created(scope, quick)]);
    await stream.untilMessages(1);
    release.resolve();
    await slow;
    await stream.untilMessages(2);
    expect(stream.messages.map((m) => m.message.finding.id)).toEqual([quick.id, slowFinding.id]);
  });
});

describe('finding stream: catch-up and slow clients', () => {
  let tuned: { app: FastifyInstance; base: string };
  beforeAll(async () => {
    // The grace to read the last comment is long: a loaded CI machine may take seconds to drain.
    tuned = await anotherApp({
      hub: { pollIntervalMs: 200 },
      maxBufferedBytes: 32 * 1024,
      slowClientTimeoutMs: 1_000,
      closeGraceMs: 20_000,
    });
  });

  it('catches up an event whose notification was missed', async () => {
    const stream = await open(reader.token, { base: tuned.base });
    const f = finding();
    // Written without pg_notify: only the periodic check can find it.
    await t.deps.database.db
      .insertInto('outbox_events')
      .values({ id: randomUUID(), tenant_id: reader.tenant_id, workspace_id: reader.workspace_id, type: 'finding.created', data: json({ finding: f }), created_at: t.clock.now() })
      .execute();
    await stream.untilMessages(1, 3_000);
    expect(stream.messages[0]!.message).toEqual({ event: 'finding.created', finding: f });
  });

  it('a burst larger than the send buffer arrives complete and in order (read back from the database)', async () => {
    const stream = await open(reader.token, { base: tuned.base });
    const scope = scopeOf(reader);
    const events = Array.from({ length: 3_000 }, () => created(scope));
    const catchUps = vi.spyOn(existingSseHub(tuned.app)!, 'readAfter');
    const seqs = await emit(events);
    await stream.untilMessages(3_000, 20_000);
    expect(catchUps).toHaveBeenCalled();
    catchUps.mockRestore();
    expect(stream.messages.map((m) => m.id)).toEqual(seqs);
  });

  it('drops a client whose socket stays full, with a last comment saying why', async () => {
    const hub = existingSseHub(tuned.app)!;
    await eventually(() => hub.clientCount === 0, 'earlier streams to be gone');
    const stream = await open(reader.token, { base: tuned.base });
    stream.res.pause();
    const scope = scopeOf(reader);
    const big = 'x'.repeat(4_000);
    // Far more than the kernel's socket buffers hold: the server's buffer fills and stays full.
    for (let i = 0; i < 6; i++) {
      await emit(Array.from({ length: 1_000 }, () => created(scope, { ...finding(), description: big })));
    }
    await eventually(() => hub.clientCount === 0, 'the slow client to be dropped', 15_000);
    stream.res.resume();
    await stream.until((s) => s.ended, 10_000, 'the end of the stream');
    expect(stream.comments.at(-1)).toMatch(/^closing: client too slow/);
  });

  it('destroys the socket of a dropped client that never reads its last comment', async () => {
    const impatient = await anotherApp({
      hub: { pollIntervalMs: 200 },
      maxBufferedBytes: 32 * 1024,
      slowClientTimeoutMs: 500,
      closeGraceMs: 500,
    });
    const hub = existingSseHub(impatient.app)!;
    // The server's end of the connection: the client's end, paused, only learns of it by reading.
    const serverSocket = new Promise<Socket>((resolve) => impatient.app.server.once('connection', resolve));
    const stream = await open(reader.token, { base: impatient.base });
    stream.res.pause();
    const socketClosed = new Promise<void>((resolve) => void serverSocket.then((s) => s.once('close', () => resolve())));
    const scope = scopeOf(reader);
    const big = 'x'.repeat(4_000);
    for (let i = 0; i < 6; i++) {
      await emit(Array.from({ length: 1_000 }, () => created(scope, { ...finding(), description: big })));
    }
    await eventually(() => hub.clientCount === 0, 'the slow client to be dropped', 15_000);
    await socketClosed;
    expect((await serverSocket).destroyed).toBe(true);
    expect(stream.res.complete).toBe(false);
  });
});
