import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, createApiKey } from '../harness/identity.js';
import { DEFAULT_LIMITS } from '../../src/modules/agents/report-body.js';
import { buildReport } from './helpers.js';

/**
 * The size limits of the report body, over a real port (the parser streams: the limits must hold
 * while bytes arrive, not after the body is buffered).
 */

let t: TestApp;
let key: string;
let base: string;

beforeAll(async () => {
  t = await createTestApp({ clockStart: '2026-11-23T13:00:00.000Z' });
  const tenant = await buildTenant(t);
  key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => t.close());

const url = (agent: string) => `${base}/api/v1/agents/${agent}/report`;
const headers = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' });

/** Peak growth of this process's resident memory while `run` runs (the server is in this process). */
async function peakGrowth<T>(run: () => Promise<T>): Promise<{ value: T; growth: number }> {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 2);
  try {
    const value = await run();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, growth: peak - baseline };
  } finally {
    clearInterval(timer);
  }
}

describe('report body limits', () => {
  it('refuses a gzip bomb (1 GiB of zeros in 1 MiB) with 413 without inflating it', async () => {
    // Gzip members may be concatenated (RFC 1952): 1,024 members of 1 MiB of zeros each.
    const member = gzipSync(Buffer.alloc(1024 * 1024));
    const bomb = Buffer.concat(Array.from({ length: 1024 }, () => member));
    expect(bomb.length).toBeLessThan(DEFAULT_LIMITS.compressed);
    const { value: res, growth } = await peakGrowth(() => fetch(url('agent-bomb'), { method: 'POST', headers: headers(), body: bomb }));
    expect(res.status).toBe(413);
    const body = (await res.json()) as any;
    expect(body.error).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'report exceeds the limit of 32 MiB decompressed',
      details: { limit_bytes: DEFAULT_LIMITS.decompressed },
    });
    // At most the decompressed limit is ever held (plus the request and parser overhead), never 1 GiB.
    expect(growth).toBeLessThan(DEFAULT_LIMITS.decompressed + 96 * 1024 * 1024);
    const agents = await sql<{ n: number }>`SELECT count(*)::int AS n FROM agents WHERE agent_id = 'agent-bomb'`.execute(t.deps.database.db);
    expect(agents.rows[0]!.n).toBe(0);
  });

  it('refuses a body over the compressed limit by its Content-Length, before reading it', async () => {
    const big = gzipSync(randomBytes(DEFAULT_LIMITS.compressed + 1));
    const res = await fetch(url('agent-big'), { method: 'POST', headers: headers(), body: big });
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.message).toBe(`report body of ${big.length} bytes exceeds the limit of 8 MiB compressed`);
  });

  it('refuses a chunked body (no Content-Length) once it passes the compressed limit', async () => {
    const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(url('agent-chunked'), { method: 'POST', headers: { ...headers(), 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      // Valid gzip of incompressible bytes: only the size is wrong with it.
      const body = gzipSync(randomBytes(DEFAULT_LIMITS.compressed * 1.5));
      let sent = 0;
      const write = () => {
        // Stop writing once the answer is there: the server does not need the rest.
        while (sent < body.length) {
          const chunk = body.subarray(sent, sent + 256 * 1024);
          sent += chunk.length;
          if (!req.write(chunk)) return req.once('drain', write);
        }
        req.end();
      };
      req.on('response', () => {
        sent = Number.POSITIVE_INFINITY;
      });
      write();
    });
    expect(status.status).toBe(413);
    expect(JSON.parse(status.body).error.message).toBe('report body exceeds the limit of 8 MiB compressed');
  });

  it('takes a large report (2,000 processes with 4 KB command lines: 8 MB of JSON) within the limits', async () => {
    const report = buildReport({ agent_id: 'agent-near-limit' }, '2026-11-23T12:55:00.000Z');
    report.processes = Array.from({ length: 2000 }, (_, i) => ({
      pid: 10_000 + i,
      name: 'worker',
      user: 'app',
      cmdline: `/usr/bin/worker --id ${i} ${'x'.repeat(4000)}`,
      cpu_percent: 0,
      memory_mb: 1,
      status: 'sleeping',
      parent_pid: 1,
      start_time: null,
    }));
    const json = Buffer.from(JSON.stringify(report));
    expect(json.length).toBeGreaterThan(8_000_000);
    const res = await fetch(url('agent-near-limit'), { method: 'POST', headers: headers(), body: gzipSync(json) });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as any).collectors.processes.items).toBe(2000);
  });
});
