import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAMEWORKS } from '../../src/modules/compliance/rules/rule-types.js';
import { MAPPING_FRAMEWORKS } from '../../src/modules/questionnaires/questions.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, type TenantFixture } from '../harness/identity.js';

/**
 * Errors that say what to do (issue 21 item 3): an enum violation lists the allowed values; an
 * unknown framework id is 400 listing the valid ones on every endpoint that takes a framework; a
 * node type without its provider prefix is one error saying so (not one per alternative of the
 * body's "one node or {nodes}" schema); an API key in X-API-Key is 401 naming the right header.
 */
let t: TestApp;
let tenant: TenantFixture;
let admin: string;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  admin = tenant.admin.token;
});
afterAll(() => t.close());

const api = (path: string) => `/api/v1/tenants/${tenant.id}${path}`;

describe('enum violations list the allowed values', () => {
  it('in a body array item, with the value given', async () => {
    const res = await call(t.app, admin, { method: 'POST', url: api('/jobs'), payload: { name: 'x', plugins: ['terraform'] } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({
      code: 'BAD_REQUEST',
      message: 'invalid body: /plugins/0 must be one of terraform-state, aws (got "terraform")',
      details: { location: 'body', errors: [{ path: '/plugins/0', message: 'must be one of terraform-state, aws (got "terraform")', allowed_values: ['terraform-state', 'aws'] }] },
    });
  });

  it('in a query parameter', async () => {
    const res = await call(t.app, admin, { url: api('/findings?status=closed') });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe('invalid querystring: /status must be one of open, resolved, accepted, all (got "closed")');
  });
});

describe('an unknown framework id is 400 listing the valid ids, on every endpoint that takes one', () => {
  const scored = FRAMEWORKS.join(', ');
  const mapping = MAPPING_FRAMEWORKS.join(', ');
  const rule = {
    id: 'custom-fw-check',
    title: 'x',
    description: 'x',
    severity: 'LOW',
    resource_type: 'aws.s3.bucket',
    framework: 'nist',
    control_id: 'AC-1',
    condition: 'false',
    remediation: { summary: 'x', steps: [] },
  };
  const cases: Array<{ name: string; method?: 'GET' | 'POST' | 'PUT'; url: string; payload?: unknown; valid: string }> = [
    { name: 'GET /findings', url: '/findings?framework=nist', valid: scored },
    { name: 'GET /findings/scored', url: '/findings/scored?framework=nist', valid: scored },
    { name: 'GET /findings/grouped', url: '/findings/grouped?framework=nist', valid: scored },
    { name: 'POST /findings/run', method: 'POST', url: '/findings/run', payload: { framework: 'nist' }, valid: scored },
    { name: 'GET /controls/status', url: '/controls/status?framework=nist', valid: scored },
    { name: 'GET /controls/gaps', url: '/controls/gaps?framework=nist', valid: scored },
    { name: 'GET /controls/attestations', url: '/controls/attestations?framework=nist', valid: mapping },
    { name: 'GET /rules', url: '/rules?framework=nist', valid: scored },
    { name: 'POST /rules', method: 'POST', url: '/rules', payload: rule, valid: scored },
    { name: 'PUT /settings/compliance', method: 'PUT', url: '/settings/compliance', payload: { frameworks: [{ id: 'nist', enabled: true }] }, valid: scored },
    { name: 'POST /reports/generate', method: 'POST', url: '/reports/generate', payload: { framework: 'nist' }, valid: scored },
    { name: 'GET /questionnaires', url: '/questionnaires?framework=nist', valid: mapping },
    { name: 'GET /questionnaires/templates', url: '/questionnaires/templates?framework=nist', valid: mapping },
    { name: 'POST /questionnaires', method: 'POST', url: '/questionnaires', payload: { title: 'x', framework: 'nist' }, valid: mapping },
    {
      name: 'POST /integrations (filters.frameworks)',
      method: 'POST',
      url: '/integrations',
      payload: {
        type: 'webhook',
        name: 'x',
        config: { url: 'https://siem.example.com/hook', secret: 'whsec_c2VjcmV0LWZvci10ZXN0cy0xMjM0NTY3OA==', events: ['finding.created'], filters: { frameworks: ['nist'] } },
      },
      valid: scored,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const res = await call(t.app, admin, { method: c.method ?? 'GET', url: api(c.url), ...(c.payload ? { payload: c.payload } : {}) });
      expect(res.statusCode, res.body).toBe(400);
      const message: string = res.json().error.message;
      expect(message).toContain('nist');
      expect(message).toContain(c.valid);
    });
  }

  it('GET /findings?framework=nist no longer answers an empty list', async () => {
    const res = await call(t.app, admin, { url: api('/findings?framework=nist') });
    expect(res.json().error).toMatchObject({ code: 'BAD_REQUEST', message: `invalid querystring: /framework must be one of ${scored} (got "nist")` });
    expect(res.json().error.details.errors[0].allowed_values).toEqual([...FRAMEWORKS]);
  });
});

describe('a node type without its provider prefix is one error that says so', () => {
  const node = { provider: 'aws', region: 'us-east-1', type: 's3.bucket', native_id: 'b-1', name: 'b-1' };

  it('one node', async () => {
    const res = await call(t.app, admin, { method: 'POST', url: api('/nodes'), payload: node });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({
      code: 'BAD_REQUEST',
      message: 'type "s3.bucket" lacks its provider prefix: use "aws.s3.bucket" (a node type is <provider>.<service>.<type>)',
      details: { index: null, field: 'type' },
    });
  });

  it('in a batch, naming the item', async () => {
    const res = await call(t.app, admin, { method: 'POST', url: api('/nodes'), payload: { nodes: [{ ...node, type: 'aws.s3.bucket' }, node] } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ message: 'nodes[1]: type "s3.bucket" lacks its provider prefix: use "aws.s3.bucket" (a node type is <provider>.<service>.<type>)' });
  });

  it('a type of another shape says what the shape is', async () => {
    const bare = await call(t.app, admin, { method: 'POST', url: api('/nodes'), payload: { ...node, type: 'bucket' } });
    expect(bare.json().error.message).toBe('type "bucket" must start with its provider "aws." (a node type is <provider>.<service>.<type>, e.g. aws.s3.bucket)');
    const short = await call(t.app, admin, { method: 'POST', url: api('/nodes'), payload: { ...node, type: 'aws.s3' } });
    expect(short.json().error.message).toBe('type "aws.s3" must be <provider>.<service>.<type> (e.g. aws.s3.bucket)');
  });

  it('a schema error reports only the alternative the body meant: one node, or {nodes: [...]}', async () => {
    const { native_id: _omitted, ...missing } = node;
    const single = await call(t.app, admin, { method: 'POST', url: api('/nodes'), payload: { ...missing, type: 'aws.s3.bucket' } });
    expect(single.statusCode).toBe(400);
    expect(single.json().error).toEqual({
      code: 'BAD_REQUEST',
      message: "invalid body: /native_id must have required property 'native_id'",
      details: { location: 'body', errors: [{ path: '/native_id', message: "must have required property 'native_id'" }] },
    });
    const batch = await call(t.app, admin, { method: 'POST', url: api('/nodes'), payload: { nodes: [{ ...node, type: 'AWS.S3.Bucket' }] } });
    expect(batch.statusCode).toBe(400);
    expect(batch.json().error.details.errors).toHaveLength(1);
    expect(batch.json().error.message).toMatch(/^invalid body: \/nodes\/0\/type must match pattern/);
    // Edges have the same one-or-batch body.
    const edge = await call(t.app, admin, { method: 'POST', url: api('/edges'), payload: { edges: [{ source: 'a', target: 'b' }] } });
    expect(edge.json().error.details.errors).toEqual([{ path: '/edges/0/type', message: "must have required property 'type'" }]);
  });
});

describe('an API key in X-API-Key', () => {
  it('is 401 saying keys go in Authorization: Bearer; the same key there works', async () => {
    const { key } = await createApiKey(t, tenant, { permissions: ['nodes:read'] });
    const wrong = await call(t.app, null, { url: api('/nodes'), headers: { 'x-api-key': key } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toEqual({
      code: 'UNAUTHORIZED',
      message: 'API keys are not read from X-API-Key: send the key as "Authorization: Bearer <key>"',
      details: null,
    });
    expect((await call(t.app, key, { url: api('/nodes') })).statusCode).toBe(200);
    const none = await call(t.app, null, { url: api('/nodes') });
    expect(none.json().error.message).toBe('missing bearer token');
  });
});
