import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';

/** Requests the OpenAPI fuzzer found answering 5xx or outside the error envelope, kept as regressions. */
let t: TestApp;
let tenant: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t.close());

const get = (url: string) => call(t.app, tenant.admin.token, { url });
/** The error envelope: code, message and a `details` key (null or an object naming the field). */
const envelope = (body: unknown) => {
  expect(body).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
  expect(body).toHaveProperty('error.details');
};

describe('fuzzer regressions', () => {
  it('a path parameter longer than the router allows is 414 in the error envelope', async () => {
    const res = await get(`/api/v1/tenants/${tenant.id}/findings/${'a'.repeat(600)}`);
    expect(res.statusCode).toBe(414);
    envelope(res.json());
    expect(res.json().error).toMatchObject({ code: 'URI_TOO_LONG', message: 'a path parameter is too long' });
  });

  it('per_page=1e309 (Infinity after coercion) is 400, not a serialisation or SQL failure', async () => {
    for (const url of [`/api/v1/tenants/${tenant.id}/findings?per_page=1e309`, `/api/v1/tenants/${tenant.id}/risk-acceptances?per_page=1e309`]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.code).toBe('BAD_REQUEST');
    }
  });

  it('Infinity in a query, path or body number is 400', async () => {
    for (const q of ['per_page=Infinity', 'page=-Infinity', 'per_page=NaN', 'page=1e999']) {
      const res = await get(`/api/v1/tenants/${tenant.id}/nodes?${q}`);
      expect(res.statusCode, q).toBe(400);
      envelope(res.json());
      const field = q.split('=')[0];
      expect(res.json().error).toMatchObject({ message: `${field} must be a finite number`, details: { field } });
    }
    const body = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/nodes`,
      headers: { 'content-type': 'application/json' },
      payload: '{"provider":"aws","region":"r","type":"aws.s3.bucket","native_id":"b","name":"n","properties":{"size":1e999}}',
    });
    expect(body.statusCode).toBe(400);
    expect(body.json().error.message).toBe('the body holds a number too large to represent');
    // An ordinary exponent is fine.
    const ok = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/nodes`,
      headers: { 'content-type': 'application/json' },
      payload: '{"provider":"aws","region":"r","type":"aws.s3.bucket","native_id":"b2","name":"n","properties":{"size":1e100}}',
    });
    expect(ok.statusCode).toBe(201);
  });

  it('page=1e308 is 400 (bounded page numbers)', async () => {
    const res = await get(`/api/v1/tenants/${tenant.id}/nodes?page=1e308`);
    expect(res.statusCode).toBe(400);
    expect((await get(`/api/v1/tenants/${tenant.id}/nodes?page=1000000`)).statusCode).toBe(200);
  });

  it('a NUL byte in a text parameter is 400 without SQL in the answer', async () => {
    const res = await get(`/api/v1/tenants/${tenant.id}/findings?search=%00`);
    expect(res.statusCode).toBe(400);
    envelope(res.json());
    expect(res.body).not.toMatch(/0x00|byte sequence|SELECT/i);
    const node = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/nodes`,
      payload: { provider: 'aws', region: 'r', type: 'aws.s3.bucket', native_id: 'b', name: 'x\u0000y' },
    });
    expect(node.statusCode).toBe(400);
  });
});
