import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { loggerOptions } from '../../src/platform/logger.js';
import { enqueueJob } from '../../src/platform/jobs/queue.js';
import { createTestApp, type TestApp } from '../harness/app.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _encoding, callback) {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    callback();
  },
});

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ log: pino(loggerOptions('info'), sink) });
});
afterAll(() => t.close());

describe('logs and metrics', () => {
  it('writes JSON request logs with the request id and redacts credentials', async () => {
    await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { authorization: 'Bearer super-secret-token', 'x-request-id': 'req-log-1' },
    });
    const entries = lines.map((line) => JSON.parse(line) as Record<string, any>);
    const logged = entries.find((e) => e.reqId === 'req-log-1' && e.msg === 'request');
    expect(logged).toMatchObject({ method: 'GET', url: '/healthz', status: 200 });
    expect(lines.join('\n')).not.toContain('super-secret-token');
  });

  it('redacts secrets in logged objects', () => {
    t.deps.log.info({ body: { password: 'hunter2hunter2', secret: 's3cr3t', name: 'ok' } }, 'probe');
    const last = JSON.parse(lines.at(-1)!);
    expect(last.body).toEqual({ password: '[redacted]', secret: '[redacted]', name: 'ok' });
  });

  it('exposes Prometheus metrics: request latency by route and queue depth', async () => {
    await enqueueJob(t.deps.database.db, t.clock, { kind: 'test.metrics' });
    await t.app.inject({ method: 'GET', url: '/api/v1/status' });
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(res.body).toMatch(/controlgraph_http_request_duration_seconds_bucket\{.*route="\/api\/v1\/status".*\}/);
    expect(res.body).toMatch(/controlgraph_queue_depth\{status="queued"\} 1/);
  });

  it('counts job outcomes', async () => {
    const { Worker } = await import('../../src/platform/jobs/worker.js');
    const worker = new Worker({
      db: t.deps.database.db,
      clock: t.clock,
      log: t.deps.log,
      definitions: [{ kind: 'test.metrics', run: async () => 'ok' }],
      onOutcome: (kind, outcome) => t.deps.metrics.jobOutcomes.inc({ kind, outcome }),
    });
    await worker.drain();
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.body).toMatch(/controlgraph_job_outcomes_total\{kind="test.metrics",outcome="succeeded"\} 1/);
  });
});
