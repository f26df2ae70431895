import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, createApiKey, type TenantFixture } from '../harness/identity.js';
import { deepBody, malformedMultipart, mutate, prng, textValue, validValue, type Schema } from './generator.js';
import { dbKind } from '../harness/database.js';

/**
 * Sends malformed, boundary and type-confused requests to every operation of the served OpenAPI
 * document with valid credentials. Fails on any 5xx, on any error response outside the envelope, and
 * on anything that looks like a stack trace or SQL. Seeds that found bugs live on as regression
 * cases in regressions.test.ts.
 */
const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
// Operations that would end the fuzzing session or never finish under inject.
const SKIP = new Set(['deleteTenant', 'streamFindings', 'logout']);
const LEAK = /(\bat [\w.<>]+ \(?[\w/.:-]+\.(ts|js):\d+)|(\bselect\b.+\bfrom\b)|(syntax error at)|(relation ".+" does not exist)|(violates .+ constraint)/i;

let t: TestApp;
let tenant: TenantFixture;
let key: string;
let doc: { paths: Record<string, Record<string, any>> };

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  // An API key: logout and role changes cannot end its session.
  key = (await createApiKey(t, tenant, { permissions: ['admin:*'] })).key;
  doc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
});
afterAll(() => t.close());

interface Operation {
  method: string;
  path: string;
  op: any;
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method) || SKIP.has(op.operationId)) continue;
      out.push({ method: method.toUpperCase(), path, op });
    }
  }
  return out;
}

function buildRequest(operation: Operation, rng: () => number) {
  const params = (operation.op.parameters ?? []) as Array<{ in: string; name: string; schema: Schema; required?: boolean }>;
  let url = operation.path;
  const query: string[] = [];
  for (const p of params) {
    if (p.in === 'path') {
      // The tenant stays ours most of the time so the request reaches the handler.
      const value = p.name === 'tenantID' && rng() < 0.85 ? tenant.id : textValue(p.schema, rng);
      url = url.replace(`{${p.name}}`, encodeURIComponent(value));
    } else if (p.in === 'query' && (p.required || rng() < 0.6)) {
      query.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(textValue(p.schema, rng))}`);
    }
  }
  const bodySchema = operation.op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
  let payload: string | undefined;
  let contentType = 'application/json';
  if (operation.op.requestBody?.content?.['multipart/form-data'] && rng() < 0.7) {
    [contentType, payload] = malformedMultipart(rng);
  } else if (['POST', 'PUT', 'PATCH'].includes(operation.method)) {
    const roll = rng();
    if (roll < 0.1) payload = '{"unterminated": ';
    else if (roll < 0.13) payload = deepBody(validValue(bodySchema, rng), rng);
    else if (roll < 0.15) {
      payload = 'a=b';
      contentType = 'application/x-www-form-urlencoded';
    } else if (roll < 0.2) payload = JSON.stringify('just a string');
    else {
      const valid = validValue(bodySchema, rng);
      payload = JSON.stringify(rng() < 0.25 ? valid : mutate(valid, bodySchema, rng));
    }
  }
  return { method: operation.method, url: query.length ? `${url}?${query.join('&')}` : url, payload, contentType };
}

describe('OpenAPI-driven fuzzing', () => {
  it(`answers ${TOTAL} malformed requests without a 5xx, outside the envelope, or a leak`, async () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(20);
    const rng = prng(SEED);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    // On PostgreSQL the same cases run, fewer of them (the PGlite run covers the full count).
    const total = dbKind() === 'postgres' ? Math.ceil(TOTAL / 4) : TOTAL;
    for (let i = 0; i < total && failures.length < 20; i++) {
      const operation = ops[i % ops.length]!;
      const request = buildRequest(operation, rng);
      const res = await t.app.inject({
        method: request.method as 'GET',
        url: request.url,
        payload: request.payload,
        headers: { authorization: `Bearer ${key}`, ...(request.payload !== undefined ? { 'content-type': request.contentType } : {}) },
      });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      const where = `#${i} ${request.method} ${request.url.slice(0, 200)} body=${(request.payload ?? '').slice(0, 200)}`;
      if (res.statusCode >= 500) failures.push(`${where} → ${res.statusCode} ${res.body.slice(0, 300)}`);
      else if (res.statusCode >= 400) {
        let body: any;
        try {
          body = res.json();
        } catch {
          failures.push(`${where} → ${res.statusCode} non-JSON error body`);
          continue;
        }
        if (typeof body?.error?.code !== 'string' || typeof body?.error?.message !== 'string' || !('details' in body.error)) {
          failures.push(`${where} → ${res.statusCode} outside the error envelope: ${res.body.slice(0, 200)}`);
        }
      }
      if (LEAK.test(res.body)) failures.push(`${where} → ${res.statusCode} leaks internals: ${res.body.slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
    // Most requests must be refused as the client's mistake, not pass as if valid.
    expect([...statuses.entries()].filter(([s]) => s >= 400 && s < 500).reduce((n, [, c]) => n + c, 0)).toBeGreaterThan(total / 2);
  }, 600_000);
});
