import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Type } from 'typebox';
import type { Module } from '../../src/modules/module.js';
import { loggerOptions } from '../../src/platform/logger.js';
import { withErrors } from '../../src/platform/http/schemas.js';
import { loggableUrl } from '../../src/platform/http/request-log.js';
import { createTestApp, type TestApp } from '../harness/app.js';

/** A route that fails, to see a 5xx logged as before (an error line with its cause) besides its request line. */
const crashModule: Module = {
  name: 'request-log-probe',
  routes: async (app) => {
    app.get('/probe/log-crash', { config: { public: true }, schema: { response: withErrors({ 200: Type.Object({}) }) } }, async () => {
      throw new Error('the probe failed on purpose');
    });
  },
};

const lines: Array<Record<string, any>> = [];
const sink = new Writable({
  write(chunk, _encoding, callback) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    callback();
  },
});

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ log: pino(loggerOptions('info'), sink), extraModules: [crashModule] });
});
afterAll(() => t.close());
beforeEach(() => {
  lines.length = 0;
});

const ofRequest = (id: string) => lines.filter((l) => l.reqId === id);

describe('request log', () => {
  it('logs a request as one info line: method, URL, status, duration and request id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'log-one-line' } });
    expect(res.statusCode).toBe(200);
    const mine = ofRequest('log-one-line');
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ level: 30, msg: 'request', method: 'GET', url: '/healthz', status: 200 });
    expect(typeof mine[0]!.duration_ms).toBe('number');
    expect(lines.some((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toBe(false);
  });

  it('puts a refusal on the same line: its code and message, nothing else', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/tenants/00000000-0000-4000-8000-000000000000/findings', headers: { 'x-request-id': 'log-refusal' } });
    expect(res.statusCode).toBe(401);
    const mine = ofRequest('log-refusal');
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ level: 30, status: 401, error: { code: 'UNAUTHORIZED', message: res.json().error.message } });
  });

  it('keeps logging a failure at error level with its cause, besides the request line', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/probe/log-crash', headers: { 'x-request-id': 'log-crash' } });
    expect(res.statusCode).toBe(500);
    const mine = ofRequest('log-crash');
    expect(mine).toHaveLength(2);
    expect(mine.find((l) => l.level === 50)).toMatchObject({ msg: 'request failed', err: { message: 'the probe failed on purpose' } });
    expect(mine.find((l) => l.level === 30)).toMatchObject({ msg: 'request', status: 500, error: { code: 'INTERNAL_ERROR' } });
  });

  it('leaves credentials in the query out of the line', async () => {
    const url = '/api/v1/tenants/t/reports/r/file?expires=1700000000&signature=sig-SECRET-1&page=2&access_token=tok-SECRET-2&code=code-SECRET-3';
    await t.app.inject({ method: 'GET', url, headers: { 'x-request-id': 'log-secrets', authorization: 'Bearer bearer-SECRET-4' } });
    const mine = ofRequest('log-secrets');
    expect(mine).toHaveLength(1);
    expect(mine[0]!.url).toBe('/api/v1/tenants/t/reports/r/file?expires=1700000000&signature=[redacted]&page=2&access_token=[redacted]&code=[redacted]');
    expect(JSON.stringify(lines)).not.toMatch(/SECRET/);
  });

  it('judges escaped parameter names and keeps the rest of the query as sent', () => {
    expect(loggableUrl('/x?%73ignature=a&search=a%20b&flag&RelayState=r&SAMLResponse=s&state=st&api_key=k')).toBe(
      '/x?%73ignature=[redacted]&search=a%20b&flag&RelayState=[redacted]&SAMLResponse=[redacted]&state=[redacted]&api_key=[redacted]',
    );
    expect(loggableUrl('/x?%E0%A4%A=1')).toBe('/x?%E0%A4%A=1');
    expect(loggableUrl('/healthz')).toBe('/healthz');
  });
});
