import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode } from '../harness/compliance.js';
import { multipart } from '../questionnaires/helpers.js';
import { projectPath } from '../../src/platform/paths.js';
import { builtinRule } from '../../src/modules/compliance/rule-catalog.js';

/**
 * The frameworks carried as Prowler ships them (issue 27 item 5), through HTTP on HIPAA: off until a
 * tenant turns it on (then refused like any disabled framework), our rules count toward the requirements
 * that list a Prowler check they reproduce, an imported Prowler finding toward the requirement it names,
 * and a requirement nothing covers is not assessed: neither listed nor scored, never passing.
 */

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let token: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t);
  other = await buildTenant(t);
  token = tenant.users['security-analyst'].token;
});
afterAll(() => t.close());

const api = (path: string, who: TenantFixture = tenant) => `/api/v1/tenants/${who.id}${path}`;
const status = (query = '') => call(t.app, token, { url: api(`/controls/status${query}`) });
const setHipaa = (enabled: boolean) =>
  call(t.app, tenant.admin.token, { method: 'PUT', url: api('/settings/compliance'), payload: { frameworks: [{ id: 'hipaa', enabled }] }, expect: 200 });

const RULE = 'aws-iam-user-access-keys-rotated';
/** HIPAA requirements Prowler maps to checks none of our rules reproduce (content/frameworks/hipaa.json). */
const UNCOVERED = ['164.308(a)(1)(ii)(A)', '164.308(a)(5)(ii)(B)', '164.308(a)(5)(ii)(C)', '164.308(a)(6)(i)', '164.308(a)(8)'];

interface ControlItem {
  framework: string;
  control_id: string;
  automated_state: string;
  passing: boolean;
  attestation_status: string;
}
async function hipaaControls(): Promise<ControlItem[]> {
  return (await status('?framework=hipaa&per_page=500')).json().controls.items as ControlItem[];
}

describe('a Prowler-carried framework (HIPAA)', () => {
  it('is off by default: listed in the settings, refused by status, gaps, audits and reports, absent from the scores', async () => {
    const settings = (await call(t.app, token, { url: api('/settings/compliance'), expect: 200 })).json();
    expect(settings.frameworks.find((f: { id: string }) => f.id === 'hipaa')).toMatchObject({ enabled: false, default_enabled: false, controls: 32 });
    for (const url of ['/controls/status?framework=hipaa', '/controls/gaps?framework=hipaa']) {
      const res = await call(t.app, token, { url: api(url) });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.message).toBe('framework "hipaa" is disabled for this tenant');
    }
    expect((await call(t.app, token, { method: 'POST', url: api('/findings/run'), payload: { framework: 'hipaa' } })).statusCode).toBe(400);
    expect((await call(t.app, tenant.admin.token, { method: 'POST', url: api('/reports/generate'), payload: { format: 'json', framework: 'hipaa' } })).statusCode).toBe(400);
    expect(Object.keys((await status()).json().by_framework)).toEqual(['nist-800-53', 'cis-aws', 'pci-dss', 'soc2']);
  });

  it('once enabled, counts its requirements our rules cover; the others are not assessed, never passing', async () => {
    const settings = (await setHipaa(true)).json();
    expect(settings.frameworks.find((f: { id: string }) => f.id === 'hipaa')).toMatchObject({ enabled: true, rules: expect.any(Number) });
    // Per tenant: the other tenant still has it off.
    const others = (await call(t.app, other.admin.token, { url: api('/settings/compliance', other), expect: 200 })).json();
    expect(others.frameworks.find((f: { id: string }) => f.id === 'hipaa').enabled).toBe(false);

    const body = (await status('?framework=hipaa&per_page=500')).json();
    expect(Object.keys(body.by_framework)).toEqual(['hipaa']);
    expect(body.by_framework.hipaa).toMatchObject({ score: 100, applicable_controls: 27, passing_controls: 27, failing_controls: 0, not_assessed_controls: 5 });
    const listed = body.controls.items as ControlItem[];
    expect(listed).toHaveLength(27);
    for (const c of listed) expect(c).toMatchObject({ framework: 'hipaa', automated_state: 'passing', passing: true });
    for (const id of UNCOVERED) expect(listed.map((c) => c.control_id)).not.toContain(id);
    // The whole catalog is still searchable (a questionnaire can cover an uncovered requirement).
    const catalog = (await call(t.app, token, { url: api('/controls/catalog?framework=hipaa&per_page=100'), expect: 200 })).json();
    expect(catalog.total).toBe(32);
    expect(Object.keys((await status()).json().by_framework)).toEqual(['nist-800-53', 'cis-aws', 'pci-dss', 'soc2', 'hipaa']);
  });

  it("a violation fails the requirements listing the rule's Prowler checks; gaps and findings follow", async () => {
    const rule = builtinRule(RULE)!;
    const mapped = rule.framework_mappings.filter((m) => m.framework === 'hipaa').map((m) => m.control_id);
    expect(mapped).toEqual(['164.308(a)(3)(ii)(C)', '164.308(a)(4)(ii)(C)', '164.308(a)(5)(ii)(D)']);
    await putNodes(t, token, tenant.id, [fixtureNode(RULE, 'violating', 'hipaa-user')]);
    await audit(t, token, tenant.id, { framework: 'hipaa' });

    const findings = (await call(t.app, token, { url: api('/findings?framework=hipaa&per_page=500'), expect: 200 })).json().items as Array<{
      rule_id: string;
      framework_mappings: Array<{ framework: string; control_id: string }>;
    }>;
    expect(findings.map((f) => f.rule_id)).toContain(RULE);
    // Every failing requirement is one an open finding's rule maps to, and every such requirement fails.
    const failingExpected = new Set(findings.flatMap((f) => f.framework_mappings.filter((m) => m.framework === 'hipaa').map((m) => m.control_id)));
    for (const id of mapped) expect(failingExpected).toContain(id);
    const controls = await hipaaControls();
    const failing = controls.filter((c) => c.automated_state === 'failing').map((c) => c.control_id);
    expect(new Set(failing)).toEqual(failingExpected);
    for (const c of controls) expect(c.passing).toBe(!failingExpected.has(c.control_id));
    const counts = (await status('?framework=hipaa')).json().by_framework.hipaa;
    expect(counts).toMatchObject({ applicable_controls: 27, failing_controls: failing.length, passing_controls: 27 - failing.length, not_assessed_controls: 5 });
    expect(counts.score).toBe(Math.round((100 * (27 - failing.length)) / 27));

    const gaps = (await call(t.app, token, { url: api('/controls/gaps?framework=hipaa&per_page=500'), expect: 200 })).json().items as Array<{ control_id: string; status: string }>;
    expect(new Set(gaps.map((g) => g.control_id))).toEqual(failingExpected);
    for (const g of gaps) expect(g.status).toBe('failing');
  });

  it('an imported Prowler finding citing a HIPAA requirement no rule covers makes it applicable and failing', async () => {
    const records = JSON.parse(readFileSync(projectPath('test', 'fixtures', 'imports', 'prowler5-example_output_aws.ocsf.json'), 'utf8')) as Array<Record<string, any>>;
    const failed = records.find((r) => r.status_code === 'FAIL' && r.metadata.event_code === 'accessanalyzer_enabled')!;
    const record = { ...failed, unmapped: { ...failed.unmapped, compliance: { HIPAA: ['164_308_a_8'] } } };
    const body = multipart({}, { filename: 'hipaa.ocsf.json', contentType: 'application/json', content: Buffer.from(JSON.stringify([record])) });
    const res = await call(t.app, tenant.admin.token, { method: 'POST', url: api('/imports'), payload: body.payload, headers: body.headers });
    expect(res.statusCode, res.body).toBe(202);
    await t.drain();
    const done = (await call(t.app, tenant.admin.token, { url: res.json().status_url, expect: 200 })).json();
    expect(done).toMatchObject({ status: 'succeeded', counts: { findings_created: 1 } });

    const imported = (await call(t.app, token, { url: api('/findings?control_id=164.308(a)(8)&framework=hipaa'), expect: 200 })).json().items;
    expect(imported).toHaveLength(1);
    expect(imported[0]).toMatchObject({ source: 'prowler', framework: 'hipaa', control_id: '164.308(a)(8)' });
    const controls = await hipaaControls();
    expect(controls.find((c) => c.control_id === '164.308(a)(8)')).toMatchObject({ automated_state: 'failing', passing: false });
    expect((await status('?framework=hipaa')).json().by_framework.hipaa).toMatchObject({ applicable_controls: 28, not_assessed_controls: 4 });
  });

  it('reports on it like any enabled framework', async () => {
    const report = (await call(t.app, tenant.admin.token, { method: 'POST', url: api('/reports/generate'), payload: { format: 'json', framework: 'hipaa' }, expect: 202 })).json();
    await t.drain();
    const done = (await call(t.app, tenant.admin.token, { url: report.status_url, expect: 200 })).json();
    expect(done).toMatchObject({ status: 'succeeded', framework: 'hipaa' });
    const file = (await call(t.app, tenant.admin.token, { url: done.download_url, expect: 200 })).json();
    const counts = (await status('?framework=hipaa')).json().by_framework.hipaa;
    expect(file.report.frameworks).toHaveLength(1);
    expect(file.report.frameworks[0]).toMatchObject({
      id: 'hipaa',
      score: counts.score,
      applicable_controls: counts.applicable_controls,
      failing_controls: counts.failing_controls,
    });
  });

  it('switched off again, it is refused and leaves the scores; its findings stay', async () => {
    await setHipaa(false);
    expect((await status('?framework=hipaa')).statusCode).toBe(400);
    expect(Object.keys((await status()).json().by_framework)).not.toContain('hipaa');
    const all = (await call(t.app, token, { url: api('/findings?per_page=500'), expect: 200 })).json().items as Array<{ source: string }>;
    expect(all.some((f) => f.source === 'prowler')).toBe(true);
  });
});
