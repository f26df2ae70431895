import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { addUser, buildTenant, call, type TenantFixture } from '../harness/identity.js';

/**
 * GET /controls/catalog: a framework's whole catalog for the questionnaire builder's control picker
 * (/controls/status lists only the controls a rule or a questionnaire already covers).
 */
let t: TestApp;
let tenant: TenantFixture;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
});
afterAll(() => t.close());

const catalog = (query: string) => `/api/v1/tenants/${tenant.id}/controls/catalog?${query}`;

describe('the control catalog', () => {
  it('pages through every current NIST 800-53 control, withdrawn ones only on request', async () => {
    const first = (await call(t.app, tenant.admin.token, { url: catalog('framework=nist-800-53&per_page=500'), expect: 200 })).json();
    // content/frameworks/nist-800-53.json: 1,189 controls and enhancements, 182 of them withdrawn.
    expect(first).toMatchObject({ total: 1_007, page: 1, per_page: 500, total_pages: 3, framework_name: expect.stringContaining('800-53') });
    expect(first.items.some((c: { withdrawn: boolean }) => c.withdrawn)).toBe(false);
    const all = (await call(t.app, tenant.admin.token, { url: catalog('framework=nist-800-53&include_withdrawn=true&per_page=1'), expect: 200 })).json();
    expect(all.total).toBe(1_189);
  });

  it('finds a control by id or by a word of its title, in any case', async () => {
    const byId = (await call(t.app, tenant.admin.token, { url: catalog('framework=nist-800-53&search=pe-3'), expect: 200 })).json();
    expect(byId.items).toContainEqual({
      framework: 'nist-800-53',
      control_id: 'PE-3',
      title: 'Physical Access Control',
      family: 'Physical and Environmental Protection',
      parent: null,
      withdrawn: false,
    });
    const byTitle = (await call(t.app, tenant.admin.token, { url: catalog('framework=soc2&search=LOGICAL'), expect: 200 })).json();
    expect(byTitle.total).toBeGreaterThan(0);
    for (const control of byTitle.items) expect(`${control.control_id} ${control.title}`.toLowerCase()).toContain('logical');
  });

  it('answers 400 naming the framework for an unknown one or none, and is open to every role that reads findings', async () => {
    const unknown = await call(t.app, tenant.admin.token, { url: catalog('framework=iso27001'), expect: 400 });
    expect(unknown.json().error.message).toMatch(/framework/);
    await call(t.app, tenant.admin.token, { url: catalog(''), expect: 400 });
    const reader = await addUser(t, tenant, 'read-only');
    await call(t.app, reader.token, { url: catalog('framework=cis-aws&per_page=5'), expect: 200 });
    await call(t.app, null, { url: catalog('framework=cis-aws'), expect: 401 });
  });
});
