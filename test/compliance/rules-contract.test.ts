import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { awsNode, putNodes } from '../harness/graph.js';
import { audit, nodeIdOf } from '../harness/compliance.js';
import { builtinRules } from '../../src/modules/compliance/rule-catalog.js';

/**
 * Custom rules as clients use them (issue 21 item 1): remediation as text, PUT of the representation
 * GET returns, built-in rules read-only whatever the body, and ?builtin on the list.
 */

let t: TestApp;
let tenant: TenantFixture;
let analyst: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  analyst = tenant.users['security-analyst'].token;
});
afterAll(() => t.close());

const rulesUrl = () => `/api/v1/tenants/${tenant.id}/rules`;
const ruleUrl = (id: string) => `${rulesUrl()}/${id}`;
const custom = (overrides: Record<string, unknown> = {}) => ({
  id: 'custom-text-remediation',
  title: 'Bucket name does not say "tmp"',
  description: 'Temporary buckets linger.',
  severity: 'LOW',
  resource_type: 'aws.s3.bucket',
  framework: 'soc2',
  control_id: 'CC6.1',
  condition: "resource.name.contains('tmp')",
  remediation: 'Delete the bucket or rename it.',
  ...overrides,
});

describe('remediation as text', () => {
  it('POST takes a string: GET shows it as the summary with no steps, and a finding of the rule carries it', async () => {
    const created = await call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom() });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().remediation).toEqual({ summary: 'Delete the bucket or rename it.', steps: [] });
    const read = await call(t.app, analyst, { url: ruleUrl('custom-text-remediation'), expect: 200 });
    expect(read.json().remediation).toEqual({ summary: 'Delete the bucket or rename it.', steps: [] });

    const bucket = awsNode('aws.s3.bucket', 'tmp-bucket');
    await putNodes(t, analyst, tenant.id, [bucket]);
    expect((await audit(t, analyst, tenant.id, { framework: 'soc2' })).run.status).toBe('succeeded');
    const findingId = encodeURIComponent(`custom-text-remediation:${nodeIdOf(bucket)}`);
    const finding = await call(t.app, analyst, { url: `/api/v1/tenants/${tenant.id}/findings/${findingId}`, expect: 200 });
    expect(finding.json().remediation).toBe('Delete the bucket or rename it.');
    const remediation = await call(t.app, analyst, { url: `/api/v1/tenants/${tenant.id}/findings/${findingId}/remediation`, expect: 200 });
    expect(remediation.json()).toMatchObject({ summary: 'Delete the bucket or rename it.', steps: [] });
  });

  it('PUT takes a string too; the object form still numbers its steps; an empty string or a bad object is 400', async () => {
    const { id: _id, ...body } = custom();
    void _id;
    const text = await call(t.app, analyst, { method: 'PUT', url: ruleUrl('custom-text-remediation'), payload: { ...body, remediation: 'Rename it.' } });
    expect(text.statusCode, text.body).toBe(200);
    expect(text.json().remediation).toEqual({ summary: 'Rename it.', steps: [] });
    const object = await call(t.app, analyst, {
      method: 'PUT',
      url: ruleUrl('custom-text-remediation'),
      payload: { ...body, remediation: { summary: 'Rename it.', steps: [{ action: 'Create a new bucket', command: 'aws s3 mb s3://<new-name>' }] } },
    });
    expect(object.statusCode, object.body).toBe(200);
    expect(object.json().remediation.steps).toEqual([{ order: 1, action: 'Create a new bucket', command: 'aws s3 mb s3://<new-name>' }]);
    // The message is about the form the value has (scalars of another type are coerced to text, as
    // everywhere in a body).
    const refusals: Array<[unknown, string]> = [
      ['', '/remediation must NOT have fewer than 1 characters'],
      [{}, "/remediation/summary must have required property 'summary'"],
      [{ summary: 'Rename it.', steps: [{ action: 'Rename' }] }, "/remediation/steps/0/command must have required property 'command'"],
    ];
    for (const [bad, message] of refusals) {
      const res = await call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom({ id: 'custom-bad-remediation', remediation: bad }) });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().error.message, JSON.stringify(bad)).toBe(`invalid body: ${message}`);
    }
  });
});

describe('PUT of the representation GET returns', () => {
  const put = (id: string, payload: Record<string, unknown>) => call(t.app, analyst, { method: 'PUT', url: ruleUrl(id), payload });

  it('GET then PUT of the unchanged representation is 200 and changes nothing the client can see but updated_at', async () => {
    await call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom({ id: 'custom-round-trip', group_by: { cause: 'bucket', self: true } }), expect: 201 });
    const read = (await call(t.app, analyst, { url: ruleUrl('custom-round-trip'), expect: 200 })).json();
    expect(read).toMatchObject({
      id: 'custom-round-trip',
      builtin: false,
      terraform_fix_available: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      evaluation: { state: 'active' },
    });
    t.clock.advance(1000);
    const res = await put('custom-round-trip', read);
    expect(res.statusCode, res.body).toBe(200);
    const { updated_at: before, ...rest } = read;
    const { updated_at: after, ...restAfter } = res.json();
    expect(restAfter).toEqual(rest);
    expect(Date.parse(after)).toBe(Date.parse(before) + 1000);

    // The representation just returned goes back as well, with a change to an editable field.
    const changed = await put('custom-round-trip', { ...res.json(), severity: 'HIGH', title: 'Renamed' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ severity: 'HIGH', title: 'Renamed', created_at: read.created_at });
  });

  it('a read-only field that differs is 400 naming it, and nothing changes', async () => {
    const read = (await call(t.app, analyst, { url: ruleUrl('custom-round-trip'), expect: 200 })).json();
    const cases: Array<[string, unknown]> = [
      ['id', 'custom-other-name'],
      ['builtin', true],
      ['terraform_fix_available', true],
      ['related_mappings', [{ framework: 'nist-800-53', control_id: 'AC-3' }]],
      ['nist_controls', [{ control_id: 'AC-3', source: 'prowler' }]],
      ['created_at', '2001-01-01T00:00:00.000Z'],
      ['updated_at', new Date(Date.parse(read.updated_at) - 1).toISOString()],
      ['updated_at', null],
    ];
    for (const [field, value] of cases) {
      const res = await put('custom-round-trip', { ...read, severity: 'CRITICAL', [field]: value });
      expect(res.statusCode, `${field}=${JSON.stringify(value)}`).toBe(400);
      expect(res.json().error.message).toMatch(new RegExp(`^${field} is read-only: `));
      expect(res.json().error.details.field).toBe(field);
    }
    const stale = await put('custom-round-trip', { ...read, updated_at: '2001-01-01T00:00:00Z' });
    expect(stale.json().error.message).toBe(
      `updated_at is read-only: the rule was last updated at ${read.updated_at}, so it changed since it was read: read it again (got "2001-01-01T00:00:00Z")`,
    );
    expect((await call(t.app, analyst, { url: ruleUrl('custom-round-trip'), expect: 200 })).json()).toEqual(read);
  });

  it('the same instant in another spelling is unchanged; evaluation is ignored; a field GET does not return is still 400', async () => {
    const read = (await call(t.app, analyst, { url: ruleUrl('custom-round-trip'), expect: 200 })).json();
    const spelled = read.created_at.replace(/\.\d{3}Z$/, (ms: string) => `${ms.slice(0, 4)}000+00:00`);
    expect(spelled).not.toBe(read.created_at);
    const other = await put('custom-round-trip', { ...read, created_at: spelled, evaluation: { ...read.evaluation, state: 'suspended', budget_exceeded_runs: 7 } });
    expect(other.statusCode, other.body).toBe(200);
    expect(other.json().evaluation).toMatchObject({ state: 'active', budget_exceeded_runs: 0 });
    const unknown = await put('custom-round-trip', { ...other.json(), owner: 'me' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.message).toBe('invalid body: /owner must NOT have additional properties');
  });
});

describe('built-in rules are read-only whatever the body', () => {
  const builtin = () => builtinRules()[0]!;

  it("PUT is 403 with the rule's own representation, a valid custom body, an invalid body and malformed JSON", async () => {
    const representation = (await call(t.app, analyst, { url: ruleUrl(builtin().id), expect: 200 })).json();
    const { id: _id, ...validBody } = custom();
    void _id;
    for (const payload of [representation, validBody, { nonsense: true }, 'not json {', '']) {
      const res = await t.app.inject({
        method: 'PUT',
        url: ruleUrl(builtin().id),
        headers: { authorization: `Bearer ${analyst}`, 'content-type': 'application/json' },
        payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      });
      expect(res.statusCode, JSON.stringify(payload).slice(0, 60)).toBe(403);
      expect(res.json().error).toMatchObject({ code: 'FORBIDDEN', message: 'built-in rules are read-only' });
    }
  });

  it('DELETE is 403 without a body, with a JSON body and with malformed JSON', async () => {
    for (const payload of [undefined, '{"id": 1}', '{{{']) {
      const res = await t.app.inject({
        method: 'DELETE',
        url: ruleUrl(builtin().id),
        headers: { authorization: `Bearer ${analyst}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(payload === undefined ? {} : { payload }),
      });
      expect(res.statusCode, String(payload)).toBe(403);
      expect(res.json().error.message).toBe('built-in rules are read-only');
    }
    expect((await call(t.app, analyst, { url: ruleUrl(builtin().id) })).statusCode).toBe(200);
  });

  it('authentication and the permission still come first (401, 403 for a role without rules:write)', async () => {
    const res = await t.app.inject({ method: 'PUT', url: ruleUrl(builtin().id), headers: { 'content-type': 'application/json' }, payload: '{{{' });
    expect(res.statusCode).toBe(401);
    const auditor = await call(t.app, tenant.users.auditor.token, { method: 'DELETE', url: ruleUrl(builtin().id) });
    expect(auditor.statusCode).toBe(403);
    expect(auditor.json().error.message).not.toBe('built-in rules are read-only');
  });
});

describe('GET /rules?builtin=', () => {
  it('true lists only built-in rules, false only custom ones, combined with the other filters and paged', async () => {
    const all = (await call(t.app, analyst, { url: `${rulesUrl()}?per_page=500`, expect: 200 })).json();
    const customCount = all.items.filter((r: { builtin: boolean }) => !r.builtin).length;
    expect(customCount).toBeGreaterThan(0);

    const builtinOnly = (await call(t.app, analyst, { url: `${rulesUrl()}?builtin=true&per_page=500`, expect: 200 })).json();
    expect(builtinOnly.total).toBe(builtinRules().length);
    expect(builtinOnly.items.every((r: { builtin: boolean }) => r.builtin)).toBe(true);
    const customOnly = (await call(t.app, analyst, { url: `${rulesUrl()}?builtin=false`, expect: 200 })).json();
    expect(customOnly.total).toBe(customCount);
    expect(customOnly.items.every((r: { builtin: boolean }) => !r.builtin)).toBe(true);

    const s3Builtin = builtinRules().filter((r) => r.resource_type === 'aws.s3.bucket' && (r.framework === 'soc2' || r.framework_mappings.some((m) => m.framework === 'soc2')));
    expect(s3Builtin.length).toBeGreaterThan(2);
    const page2 = await call(t.app, analyst, { url: `${rulesUrl()}?builtin=true&framework=soc2&resource_type=aws.s3.bucket&per_page=2&page=2`, expect: 200 });
    expect(page2.json()).toMatchObject({ total: s3Builtin.length, page: 2, per_page: 2 });
    expect(page2.json().items.map((r: { id: string }) => r.id)).toEqual(s3Builtin.slice(2, 4).map((r) => r.id));
    const customS3 = (await call(t.app, analyst, { url: `${rulesUrl()}?builtin=false&framework=soc2&resource_type=aws.s3.bucket`, expect: 200 })).json();
    expect(customS3.items.map((r: { id: string }) => r.id).sort()).toEqual(['custom-round-trip', 'custom-text-remediation']);
  });

  it('a value other than true or false is 400', async () => {
    for (const value of ['yes', '1', '']) {
      const res = await call(t.app, analyst, { url: `${rulesUrl()}?builtin=${value}` });
      expect(res.statusCode, value).toBe(400);
      expect(res.json().error.message, value).toBe('invalid querystring: /builtin must be boolean');
    }
  });
});
