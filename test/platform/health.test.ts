import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/platform/db/database.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { startTcpProxy } from '../harness/tcp-proxy.js';
import { createTestDatabase } from '../harness/database.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('health and status', () => {
  it('GET /healthz answers 200 ok with the database connected, without authentication', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', db_connected: true });
  });

  it('GET /api/v1/status reports version, database kind, queue depth and uptime', async () => {
    t.clock.advance(90_000);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/status' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      status: 'ok',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      database: { kind: t.db.kind, connected: true },
      artifact_store: { kind: 'file', available: true },
      queue: { queued: 0, running: 0 },
      uptime_seconds: 90,
    });
  });

  it('answers 503 degraded when the database becomes unreachable under a running app, and recovers', async () => {
    // A database of our own behind a proxy we can cut: PostgreSQL through TCP, PGlite by closing it.
    if (t.db.kind === 'postgres') {
      const url = new URL(t.db.url);
      const proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
      url.host = `127.0.0.1:${proxy.port}`;
      const handle = await openDatabase(url.toString(), { poolSize: 2 });
      const original = t.deps.database;
      t.deps.database = handle;
      try {
        expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
        proxy.cut();
        const down = await t.app.inject({ method: 'GET', url: '/healthz' });
        expect(down.statusCode).toBe(503);
        expect(down.json()).toEqual({ status: 'degraded', db_connected: false });
        const status = await t.app.inject({ method: 'GET', url: '/api/v1/status' });
        expect(status.json()).toMatchObject({ status: 'degraded', database: { connected: false } });
        proxy.restore();
        expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok', db_connected: true });
      } finally {
        t.deps.database = original;
        await handle.close();
        await proxy.close();
      }
    } else {
      const other = await createTestDatabase();
      const handle = other.handle;
      const original = t.deps.database;
      t.deps.database = handle;
      try {
        expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
        await handle.close();
        const down = await t.app.inject({ method: 'GET', url: '/healthz' });
        expect(down.statusCode).toBe(503);
        expect(down.json()).toEqual({ status: 'degraded', db_connected: false });
      } finally {
        t.deps.database = original;
        await other.dispose();
      }
    }
  });
});
