import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { manualItem, poamApi } from './helpers.js';

/**
 * ARTIFACT_STORE=none (contracts section 1): the evidence endpoints that touch files answer 503
 * "artifact storage not configured"; everything else, the exports included (built in the request),
 * keeps working.
 */
let t: TestApp;
let tenant: TenantFixture;
let api: ReturnType<typeof poamApi>;
let token: string;

beforeAll(async () => {
  t = await createTestApp({ artifactStore: 'none' });
  tenant = await buildTenant(t);
  api = poamApi(t, tenant.id);
  token = tenant.users['security-analyst'].token;
});
afterAll(() => t.close());

describe('without artifact storage', () => {
  it('upload, download and delete of evidence answer 503; items, status moves and exports work', async () => {
    const item = (await api.create(token, manualItem(), 201)).json();
    const upload = await api.upload(token, item.id, 'proof');
    expect(upload.statusCode).toBe(503);
    expect(upload.json().error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'artifact storage not configured' });
    const evidenceUrl = `${api.base}/${item.id}/evidence/00000000-0000-4000-8000-000000000000`;
    for (const [method, url] of [
      ['GET', `${evidenceUrl}/download`],
      ['DELETE', evidenceUrl],
    ] as const) {
      const res = await call(t.app, token, { method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(503);
      expect(res.json().error.message).toBe('artifact storage not configured');
    }
    expect((await call(t.app, token, { url: `${api.base}/${item.id}/evidence`, expect: 200 })).json()).toEqual({ items: [] });

    await api.status(token, item.id, { status: 'in_progress' }, 200);
    await api.status(token, item.id, { status: 'verification' }, 200);
    // No evidence can be linked, so the item cannot close.
    expect((await api.status(token, item.id, { status: 'closed' })).statusCode).toBe(409);

    for (const format of ['fedramp', 'csv', 'json', 'oscal']) {
      expect((await call(t.app, token, { url: `${api.base}/export?format=${format}` })).statusCode, format).toBe(200);
    }
    expect((await api.remove(token, item.id)).statusCode).toBe(200);
  });
});
