import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { manualItem, poamApi } from '../poam/helpers.js';
import { MAX_PROPERTIES_DEPTH } from '../../src/platform/http/json-depth.js';

/**
 * Inputs that answered 500 (or an answer outside the error envelope) when tried by hand: each is a
 * 4xx in the envelope now. The OpenAPI fuzzer generates the same shapes (see generator.ts).
 */
let t: TestApp;
let tenant: TenantFixture;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t.close());

const envelope = (res: { statusCode: number; json(): unknown }, status: number) => {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
};

/** `{"a":{"a":…}}` nested `depth` objects deep, as text (JSON.stringify of such a value would recurse too). */
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('bad input is a 4xx in the envelope, never a 500', () => {
  it('node properties nested 20,000 deep are 400 naming the depth limit', async () => {
    const res = await call(t.app, tenant.admin.token, {
      method: 'POST',
      url: `/api/v1/tenants/${tenant.id}/nodes`,
      headers: { 'content-type': 'application/json' },
      payload: `{"provider":"aws","region":"r","type":"aws.s3.bucket","native_id":"deep","name":"n","properties":${nested(20_000)}}`,
    });
    envelope(res, 400);
    expect((res.json() as { error: { message: string } }).error.message).toBe(`the body is nested deeper than ${MAX_PROPERTIES_DEPTH} levels`);
  });

  it('properties at the depth limit are stored; one level more is refused', async () => {
    const node = (name: string, depth: number) =>
      call(t.app, tenant.admin.token, {
        method: 'POST',
        url: `/api/v1/tenants/${tenant.id}/nodes`,
        headers: { 'content-type': 'application/json' },
        // The body object is the first level; `properties` is the outermost object of nested().
        payload: `{"provider":"aws","region":"r","type":"aws.s3.bucket","native_id":"${name}","name":"n","properties":${nested(depth - 1)}}`,
      });
    expect((await node('at-limit', MAX_PROPERTIES_DEPTH)).statusCode).toBe(201);
    envelope(await node('over-limit', MAX_PROPERTIES_DEPTH + 1), 400);
  });

  it('multipart without a boundary, with a boundary over 256 characters, or unterminated is 400', async () => {
    const item = await poamApi(t, tenant.id).create(tenant.admin.token, manualItem(), 201);
    const upload = (headers: Record<string, string>, payload: string) =>
      call(t.app, tenant.admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/poam/${item.json().id}/evidence`, headers, payload });

    const refused = async (res: Awaited<ReturnType<typeof upload>>, message: string) => {
      envelope(res, 400);
      expect(res.json().error.message).toBe(message);
    };
    await refused(await upload({ 'content-type': 'multipart/form-data' }, 'x'), 'the multipart content type has no boundary');
    const long = 'b'.repeat(300);
    const part = (boundary: string) => `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n`;
    await refused(await upload({ 'content-type': `multipart/form-data; boundary=${long}` }, `${part(long)}x\r\n--${long}--\r\n`), 'the multipart boundary is too long');
    await refused(await upload({ 'content-type': 'multipart/form-data; boundary=zzz' }, `${part('zzz')}half a file`), 'the multipart body ends before its closing boundary');
    // The same upload, well formed, is stored: the refusals above come from the body alone.
    expect((await upload({ 'content-type': 'multipart/form-data; boundary=zzz' }, `${part('zzz')}a file\r\n--zzz--\r\n`)).statusCode).toBe(201);
  });

  it('api key permissions named like Object.prototype members are 400', async () => {
    for (const permissions of ['__proto__', 'constructor', ['__proto__'], ['toString'], ['hasOwnProperty']]) {
      const res = await call(t.app, tenant.admin.token, {
        method: 'POST',
        url: '/api/v1/api-keys',
        payload: { name: 'k', tenants: [tenant.id], permissions },
      });
      expect(res.statusCode, JSON.stringify(permissions)).toBe(400);
      envelope(res, 400);
    }
  });

  it('POA&M sort names like Object.prototype members are 400', async () => {
    for (const url of [
      `/api/v1/tenants/${tenant.id}/poam?sort=constructor`,
      `/api/v1/tenants/${tenant.id}/poam?sort=__proto__`,
      `/api/v1/tenants/${tenant.id}/poam/overdue?sort=__proto__`,
      `/api/v1/tenants/${tenant.id}/poam/overdue?sort=toString`,
    ]) {
      const res = await call(t.app, tenant.admin.token, { url });
      expect(res.statusCode, url).toBe(400);
      envelope(res, 400);
    }
  });
});

describe('headers over the server limit', () => {
  it('a 20,000-character X-Request-Id is 431 in the error envelope', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const res = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/healthz', headers: { 'x-request-id': 'r'.repeat(20_000) } }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, type: String(response.headers['content-type']), body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(res.status).toBe(431);
    expect(res.type).toMatch(/application\/json/);
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'HEADERS_TOO_LARGE', message: 'the request headers are too large', details: null },
    });
  });
});
