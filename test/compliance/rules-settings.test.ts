import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { builtinRules } from '../../src/modules/compliance/rule-catalog.js';
import { FRAMEWORKS } from '../../src/modules/compliance/rules/rule-types.js';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let analyst: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  analyst = tenant.users['security-analyst'].token;
});
afterAll(() => t.close());

const rulesUrl = (id = tenant.id) => `/api/v1/tenants/${id}/rules`;
const custom = (overrides: Record<string, unknown> = {}) => ({
  id: 'custom-no-public-name',
  title: 'Bucket name is not "public"',
  description: 'Naming hygiene.',
  severity: 'LOW',
  resource_type: 'aws.s3.bucket',
  framework: 'soc2',
  control_id: 'CC6.1',
  framework_mappings: [{ framework: 'nist-800-53', control_id: 'AC-3' }],
  condition: "resource.name.contains('public')",
  remediation: { summary: 'Rename it.', steps: [{ action: 'Create a new bucket', command: 'aws s3 mb s3://<new-name>' }] },
  ...overrides,
});

describe('GET /rules', () => {
  it('lists built-in rules with every contract field, paged and filterable', async () => {
    const res = await call(t.app, tenant.users['read-only'].token, { url: `${rulesUrl()}?per_page=500`, expect: 200 });
    expect(res.json().total).toBe(builtinRules().length);
    const rule = res.json().items[0];
    expect(Object.keys(rule).sort()).toEqual(
      [
        'builtin',
        'condition',
        'control_id',
        'created_at',
        'description',
        'evaluation',
        'finding_description',
        'finding_title',
        'framework',
        'framework_mappings',
        'group_by',
        'id',
        'nist_controls',
        'related_mappings',
        'remediation',
        'resource_type',
        'severity',
        'terraform_fix_available',
        'title',
        'updated_at',
      ].sort(),
    );
    expect(rule).toMatchObject({ builtin: true, created_at: null, updated_at: null });
    const s3 = await call(t.app, analyst, { url: `${rulesUrl()}?resource_type=aws.s3.bucket&per_page=500`, expect: 200 });
    expect(s3.json().items.every((r: { resource_type: string }) => r.resource_type === 'aws.s3.bucket')).toBe(true);
    const soc2 = await call(t.app, analyst, { url: `${rulesUrl()}?framework=soc2&per_page=500`, expect: 200 });
    expect(soc2.json().total).toBe(builtinRules().filter((r) => r.framework === 'soc2' || r.framework_mappings.some((m) => m.framework === 'soc2')).length);
  });
});

describe('GET /rules?search=', () => {
  it('matches id, title or description, in any case', async () => {
    const word = 'encrypted';
    const expected = builtinRules().filter((r) => [r.id, r.title, r.description].some((text) => text.toLowerCase().includes(word)));
    expect(expected.length).toBeGreaterThan(0);
    const res = await call(t.app, analyst, { url: `${rulesUrl()}?search=ENCRYPTED&per_page=500`, expect: 200 });
    expect(res.json().total).toBe(expected.length);
    expect(
      res
        .json()
        .items.map((r: { id: string }) => r.id)
        .sort(),
    ).toEqual(expected.map((r) => r.id).sort());
    const one = builtinRules()[0]!;
    expect((await call(t.app, analyst, { url: `${rulesUrl()}?search=${one.id}`, expect: 200 })).json().items.map((r: { id: string }) => r.id)).toContain(one.id);
    expect((await call(t.app, analyst, { url: `${rulesUrl()}?search=no-rule-says-this-xyz`, expect: 200 })).json().total).toBe(0);
    expect((await call(t.app, analyst, { url: `${rulesUrl()}?search=${'x'.repeat(201)}` })).statusCode).toBe(400);
  });
});

describe('custom rules', () => {
  it('POST creates (201, builtin false); the rule is listed only in its tenant', async () => {
    const res = await call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom() });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ id: 'custom-no-public-name', builtin: false, remediation: { steps: [{ order: 1 }] } });
    expect((await call(t.app, analyst, { url: `${rulesUrl()}/custom-no-public-name` })).statusCode).toBe(200);
    expect((await call(t.app, other.admin.token, { url: `${rulesUrl(other.id)}/custom-no-public-name` })).statusCode).toBe(404);
    expect((await call(t.app, analyst, { url: `${rulesUrl()}?builtin=false`, expect: 200 })).json().total).toBe(1);
  });

  it('a condition that does not compile is 400 with the compiler message in details', async () => {
    const res = await call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom({ id: 'custom-broken', condition: 'resource.name ==' }) });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/^condition does not compile/);
    expect(res.json().error.details.compiler_message).toMatch(/resource\.name ==/);
  });

  it('409 for a duplicate id or a built-in id; 400 for an id with a colon or an unknown control', async () => {
    expect((await call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom() })).statusCode).toBe(409);
    expect((await call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom({ id: builtinRules()[0]!.id }) })).statusCode).toBe(409);
    expect((await call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom({ id: 'a:b' }) })).statusCode).toBe(400);
    const control = await call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom({ id: 'custom-x', control_id: 'CC99.9' }) });
    expect(control.statusCode).toBe(400);
    expect(control.json().error.message).toBe('unknown control CC99.9 in soc2');
  });

  it('rules:write is security-analyst and above (403 for an auditor)', async () => {
    expect((await call(t.app, tenant.users.auditor.token, { method: 'POST', url: rulesUrl(), payload: custom({ id: 'custom-y' }) })).statusCode).toBe(403);
  });

  it('PUT replaces a custom rule; built-in rules are read-only (403); unknown is 404', async () => {
    const { id: _id, ...body } = custom({ severity: 'HIGH' });
    void _id;
    const res = await call(t.app, analyst, { method: 'PUT', url: `${rulesUrl()}/custom-no-public-name`, payload: body });
    expect(res.statusCode).toBe(200);
    expect(res.json().severity).toBe('HIGH');
    const builtin = await call(t.app, analyst, { method: 'PUT', url: `${rulesUrl()}/${builtinRules()[0]!.id}`, payload: body });
    expect(builtin.statusCode).toBe(403);
    expect(builtin.json().error.message).toBe('built-in rules are read-only');
    expect((await call(t.app, analyst, { method: 'PUT', url: `${rulesUrl()}/custom-none`, payload: body })).statusCode).toBe(404);
    const badCondition = await call(t.app, analyst, { method: 'PUT', url: `${rulesUrl()}/custom-no-public-name`, payload: { ...body, condition: '1 +' } });
    expect(badCondition.statusCode).toBe(400);
  });

  it('DELETE removes a custom rule (204); built-in 403; unknown 404; audit-logged', async () => {
    expect((await call(t.app, analyst, { method: 'DELETE', url: `${rulesUrl()}/${builtinRules()[0]!.id}` })).statusCode).toBe(403);
    expect((await call(t.app, analyst, { method: 'DELETE', url: `${rulesUrl()}/custom-no-public-name` })).statusCode).toBe(204);
    expect((await call(t.app, analyst, { method: 'DELETE', url: `${rulesUrl()}/custom-no-public-name` })).statusCode).toBe(404);
    const log = await call(t.app, tenant.admin.token, { url: `/api/v1/tenants/${tenant.id}/audit-logs?action=rule.*`, expect: 200 });
    expect(
      log
        .json()
        .items.map((e: { action: string }) => e.action)
        .sort(),
    ).toEqual(['rule.created', 'rule.deleted', 'rule.updated']);
  });

  it('group_by names exactly one source of the cause (400 otherwise); absent is null', async () => {
    const post = (group_by: unknown) => call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom({ id: 'custom-grouped', group_by }) });
    for (const bad of [
      { cause: 'bucket' },
      { cause: 'bucket', self: true, path: 'configuration.name' },
      { cause: 'bucket', path: 'configuration.name', node_type: 'aws.s3.bucket' },
      { cause: 'bucket', self: false },
      { cause: '', self: true },
      { cause: 'bucket', path: 'a..b' },
    ]) {
      expect((await post(bad)).statusCode, JSON.stringify(bad)).toBe(400);
    }
    const ok = await post({ cause: 'KMS key', path: 'supplementaryConfiguration.ServerSideEncryptionConfiguration.rules.applyServerSideEncryptionByDefault.kmsMasterKeyID' });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().group_by).toEqual({
      cause: 'KMS key',
      path: 'supplementaryConfiguration.ServerSideEncryptionConfiguration.rules.applyServerSideEncryptionByDefault.kmsMasterKeyID',
    });
    const plain = await call(t.app, analyst, { method: 'POST', url: rulesUrl(), payload: custom({ id: 'custom-ungrouped' }), expect: 201 });
    expect(plain.json().group_by).toBeNull();
  });
});

describe('compliance settings', () => {
  it('GET lists every framework with its enabled state, control and rule counts: the four core ones on, the Prowler-carried ones off', async () => {
    const res = await call(t.app, tenant.users['read-only'].token, { url: `/api/v1/tenants/${tenant.id}/settings/compliance`, expect: 200 });
    const list = res.json().frameworks;
    expect(list.map((f: { id: string }) => f.id)).toEqual([...FRAMEWORKS]);
    expect(list.filter((f: { enabled: boolean }) => f.enabled).map((f: { id: string }) => f.id)).toEqual(['nist-800-53', 'cis-aws', 'pci-dss', 'soc2']);
    expect(list.find((f: { id: string }) => f.id === 'hipaa')).toMatchObject({ enabled: false, default_enabled: false, controls: 32 });
    expect(list.find((f: { id: string }) => f.id === 'nist-800-53')).toMatchObject({ enabled: true, controls: 1189, name: expect.stringMatching(/800-53/) });
    expect(list.every((f: { rules: number }) => f.rules > 0)).toBe(true);
  });

  it('PUT switches frameworks (tenant:update); unknown framework is 400; per tenant', async () => {
    expect(
      (await call(t.app, analyst, { method: 'PUT', url: `/api/v1/tenants/${tenant.id}/settings/compliance`, payload: { frameworks: [{ id: 'soc2', enabled: false }] } }))
        .statusCode,
    ).toBe(403);
    const res = await call(t.app, tenant.admin.token, {
      method: 'PUT',
      url: `/api/v1/tenants/${tenant.id}/settings/compliance`,
      payload: { frameworks: [{ id: 'soc2', enabled: false }] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().frameworks.find((f: { id: string }) => f.id === 'soc2').enabled).toBe(false);
    const status = await call(t.app, analyst, { url: `/api/v1/tenants/${tenant.id}/controls/status`, expect: 200 });
    expect(Object.keys(status.json().by_framework)).not.toContain('soc2');
    const otherSettings = await call(t.app, other.admin.token, { url: `/api/v1/tenants/${other.id}/settings/compliance`, expect: 200 });
    expect(otherSettings.json().frameworks.find((f: { id: string }) => f.id === 'soc2').enabled).toBe(true);
    expect(
      (
        await call(t.app, tenant.admin.token, {
          method: 'PUT',
          url: `/api/v1/tenants/${tenant.id}/settings/compliance`,
          payload: { frameworks: [{ id: 'hipaa-2013', enabled: true }] },
        })
      ).statusCode,
    ).toBe(400);
  });
});
