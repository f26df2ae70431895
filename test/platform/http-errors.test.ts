import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import type { Module } from '../../src/modules/module.js';
import { conflict } from '../../src/platform/http/errors.js';
import { withErrors } from '../../src/platform/http/schemas.js';
import { createTestApp, type TestApp } from '../harness/app.js';

/** Routes that exist only in this test's app, to reach each error path through real HTTP handling. */
const probeModule: Module = {
  name: 'probe',
  routes: async (app) => {
    app.post(
      '/probe/echo',
      {
        config: { public: true },
        schema: {
          body: Type.Object({ name: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
          response: withErrors({ 200: Type.Object({ name: Type.String(), count: Type.Integer() }) }),
        },
      },
      async (request) => request.body,
    );
    app.get('/probe/crash', { config: { public: true }, schema: { response: withErrors({ 200: Type.Object({}) }) } }, async () => {
      throw new Error('relation "secret_table" does not exist at SELECT * FROM secret_table');
    });
    app.get('/probe/conflict', { config: { public: true }, schema: { response: withErrors({ 200: Type.Object({}) }, [409]) } }, async () => {
      throw conflict('already done', { id: 'x' });
    });
  },
};

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ extraModules: [probeModule], config: { bodyLimitBytes: 2048 } });
});
afterAll(() => t.close());

describe('error envelope', () => {
  it('answers unknown routes with 404 NOT_FOUND', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/does-not-exist' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'route GET /api/v1/does-not-exist not found', details: null } });
  });

  it('answers a path parameter over 500 characters with 414 URI_TOO_LONG in the envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/tenants/${'a'.repeat(501)}/nodes` });
    expect(res.statusCode).toBe(414);
    expect(res.json()).toEqual({ error: { code: 'URI_TOO_LONG', message: 'a path parameter is too long', details: null } });
  });

  it('answers schema violations with 400 BAD_REQUEST naming the failing field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo', payload: { name: 'a', count: -1 } });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.error.code).toBe('BAD_REQUEST');
    expect(body.error.details.location).toBe('body');
    expect(body.error.details.errors[0].path).toBe('/count');
  });

  it('names a missing required field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo', payload: { count: 1 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.errors[0].path).toBe('/name');
  });

  it('refuses unknown properties of a closed object', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo', payload: { name: 'a', count: 1, extra: true } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.errors[0].path).toBe('/extra');
  });

  it('accepts a valid body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo', payload: { name: 'a', count: 1 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ name: 'a', count: 1 });
  });

  it('answers malformed JSON with 400', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo', headers: { 'content-type': 'application/json' }, payload: '{"name": ' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('BAD_REQUEST');
  });

  it('answers an empty JSON body with 400', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('BAD_REQUEST');
  });

  it('answers a wrong content type with 400', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo', headers: { 'content-type': 'application/x-unknown' }, payload: 'name=a' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({ code: 'BAD_REQUEST', message: 'unsupported content type "application/x-unknown"', details: null });
  });

  it('answers an oversized body with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo', payload: { name: 'x'.repeat(5000), count: 1 } });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers unexpected failures with 500 INTERNAL_ERROR and no stack or SQL', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/probe/crash' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'internal server error', details: null } });
    expect(res.body).not.toMatch(/secret_table|SELECT|at .*\.ts/);
  });

  it('passes domain errors through with their status, code and details', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/probe/conflict' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: { code: 'CONFLICT', message: 'already done', details: { id: 'x' } } });
  });

  it('returns a request id, keeping a sane one the client sent', async () => {
    const own = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123' } });
    expect(own.headers['x-request-id']).toBe('trace-123');
    const generated = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
