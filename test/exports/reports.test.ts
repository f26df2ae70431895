import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, fresh, type Session, type TenantFixture } from '../harness/identity.js';
import { events, fixtureNode } from '../harness/compliance.js';
import { projectPath } from '../../src/platform/paths.js';
import { sweepRetention } from '../../src/modules/exports/retention.js';
import { CSV_COLUMNS } from '../../src/modules/exports/reports/render-data.js';
import { pdfPages } from './pdf-text.js';

/**
 * Compliance reports: generated on the queue into the artifact store (PDF, JSON, CSV), listed,
 * downloaded with a token or through the signed link of report.generated, failed, expired.
 * The workspace's findings come from a real discovery job over the Terraform fixture.
 */

const RETENTION_MS = 2 * 86_400_000;
const STATE = JSON.parse(readFileSync(projectPath('test', 'fixtures', 'terraform', 'discovery', 'terraform.tfstate'), 'utf8'));
// A resource whose name a spreadsheet would run as a formula.
const HOSTILE_NAME = '=HYPERLINK("http://attacker.invalid","open me")';

let t: TestApp;
let tenant: TenantFixture;
let other: TenantFixture;
let admin: Session;

const url = (tenantId: string, path = '') => `/api/v1/tenants/${tenantId}/reports${path}`;

beforeAll(async () => {
  t = await createTestApp({ env: { CONTROLGRAPH_EXPORT_RETENTION: '2d' } });
  tenant = await buildTenant(t, { name: 'Acme Reports' });
  other = await buildTenant(t);
  admin = tenant.admin;
  const hostile = { ...fixtureNode('aws-rds-instance-backup-enabled', 'violating', 'db-hostile'), name: HOSTILE_NAME };
  await call(t.app, admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/nodes`, payload: hostile, expect: 201 });
  await call(t.app, admin.token, {
    method: 'POST',
    url: `/api/v1/tenants/${tenant.id}/jobs`,
    payload: { name: 'shop', plugins: ['terraform-state'], config: { 'terraform-state': { state: STATE } }, start: true },
    expect: 201,
  });
  await t.drain();
});
afterAll(() => t.close());

async function generate(session: Session, body: Record<string, unknown>, tenantId = tenant.id) {
  return (await call(t.app, session.token, { method: 'POST', url: url(tenantId, '/generate'), payload: body, expect: 202 })).json();
}
async function openFindings(query = '') {
  return (await call(t.app, (await fresh(t, admin)).token, { url: `/api/v1/tenants/${tenant.id}/findings?per_page=500${query}`, expect: 200 })).json();
}

describe('POST /reports/generate', () => {
  it('builds a PDF, announces it with report.generated and a signed link that expires', async () => {
    const analyst = tenant.users['security-analyst'];
    const report = await generate(analyst, {});
    expect(report).toMatchObject({ status: 'queued', format: 'pdf', type: 'compliance', framework: null, asset_group_id: null, download_url: null, size_bytes: null, attempts: 0 });
    expect(report.status_url).toBe(url(tenant.id, `/${report.id}`));
    const early = await call(t.app, analyst.token, { url: `${report.status_url}/download` });
    expect(early.statusCode).toBe(409);
    expect(early.json().error.message).toBe('report is not finished (status queued)');

    await t.drain();
    const done = (await call(t.app, analyst.token, { url: report.status_url, expect: 200 })).json();
    const findings = await openFindings();
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1, content_type: 'application/pdf', summary: { total_findings: findings.total } });
    expect(done.file_name).toMatch(/^compliance-report-all-frameworks-\d{8}-\d{6}\.pdf$/);
    expect(new Date(done.expires_at).getTime() - new Date(done.finished_at).getTime()).toBe(RETENTION_MS);
    expect(done.error).toBeUndefined();

    const file = await call(t.app, analyst.token, { url: done.download_url, expect: 200 });
    expect(file.headers['content-type']).toBe('application/pdf');
    expect(file.headers['content-disposition']).toBe(`attachment; filename="${done.file_name}"`);
    expect(file.rawPayload.length).toBe(done.size_bytes);
    expect(file.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    expect(file.rawPayload.subarray(-6).toString()).toMatch(/%%EOF/);
    const pages = await pdfPages(file.rawPayload);
    const text = pages.map((p) => p.text).join('\n');
    for (const expected of ['Compliance report', 'Tenant Acme Reports', 'Summary', 'NIST SP 800-53', 'Failing controls', 'Active findings', 'shop-orders', 'Sign-off'])
      expect(text).toContain(expected);
    expect(text).toContain(`${done.summary.overall_score}%`);
    // Cells wrap within their column: the hostile resource's name is printed whole, over several lines.
    const squeeze = (text: string) => text.replace(/\s+/g, '');
    expect(pages.flatMap((p) => p.columns).some((column) => squeeze(column).includes(squeeze(HOSTILE_NAME)))).toBe(true);
    expect(text.split('\n').some((line) => line.includes(HOSTILE_NAME))).toBe(false);

    // report.generated: the spec's data shape; its link works without a token, until it expires.
    const event = (await events(t, tenant.id, 'report.generated')).find((e) => (e.data as { report: { id: string } }).report.id === report.id)!;
    const data = (event.data as { report: Record<string, unknown> }).report;
    expect(Object.keys(data).sort()).toEqual(['download_expires', 'download_url', 'format', 'framework', 'id', 'size_bytes', 'type']);
    expect(data).toMatchObject({ id: report.id, type: 'compliance', framework: null, format: 'pdf', size_bytes: done.size_bytes });
    expect(new Date(data.download_expires as string).getTime() - new Date(done.finished_at).getTime()).toBe(86_400_000);
    const link = data.download_url as string;
    expect(link).toMatch(new RegExp(`^/api/v1/tenants/${tenant.id}/reports/${report.id}/file\\?expires=\\d+&signature=[0-9a-f]{64}$`));
    const viaLink = await call(t.app, null, { url: link, expect: 200 });
    expect(viaLink.rawPayload.equals(file.rawPayload)).toBe(true);
    const tampered = [
      link.replace(/signature=(.)/, (_m, c: string) => `signature=${c === 'a' ? 'b' : 'a'}`),
      link.replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 3600}`),
      link.replace(report.id, '00000000-0000-4000-8000-000000000000'),
      link.replace(tenant.id, other.id),
    ];
    for (const bad of tampered) {
      const res = await call(t.app, null, { url: bad });
      expect(res.statusCode, bad).toBe(403);
      expect(res.json().error.message).toBe('invalid download link');
    }
    expect((await call(t.app, null, { url: link.replace(/&signature=.*/, '') })).statusCode).toBe(400);
    t.clock.advance(86_400_000);
    const late = await call(t.app, null, { url: link });
    expect(late.statusCode).toBe(403);
    expect(late.json().error.message).toBe('download link expired');
    // The report itself is kept for the whole retention.
    expect((await call(t.app, (await fresh(t, admin)).token, { url: done.download_url })).statusCode).toBe(200);
  });

  it('builds JSON for one framework and CSV (all findings, safe for spreadsheets)', async () => {
    admin = await fresh(t, admin);
    const json = await generate(admin, { format: 'json', framework: 'cis-aws' });
    const csv = await generate(admin, { format: 'csv' });
    await t.drain();
    const jsonDone = (await call(t.app, admin.token, { url: json.status_url, expect: 200 })).json();
    expect(jsonDone).toMatchObject({ status: 'succeeded', framework: 'cis-aws', content_type: 'application/json' });
    const body = (await call(t.app, admin.token, { url: jsonDone.download_url, expect: 200 })).json();
    const cis = await openFindings('&framework=cis-aws');
    expect(body.report).toMatchObject({
      title: 'Compliance report (CIS Amazon Web Services Foundations Benchmark)',
      tenant: { id: tenant.id, name: 'Acme Reports' },
      total_findings: cis.total,
    });
    expect(body.report.frameworks.map((f: { id: string }) => f.id)).toEqual(['cis-aws']);
    expect(body.findings).toHaveLength(cis.total);
    expect(new Set(body.findings.map((f: { id: string }) => f.id))).toEqual(new Set(cis.items.map((f: { id: string }) => f.id)));
    // Most severe first.
    const ranks = body.findings.map((f: { severity: string }) => ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'].indexOf(f.severity));
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
    expect(body.report.failing_controls.length).toBeGreaterThan(0);
    expect(body.report.failing_controls[0]).toHaveProperty('title');

    const csvDone = (await call(t.app, admin.token, { url: csv.status_url, expect: 200 })).json();
    const file = await call(t.app, admin.token, { url: csvDone.download_url, expect: 200 });
    expect(file.headers['content-type']).toBe('text/csv; charset=utf-8');
    const lines = file.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    const all = await openFindings();
    expect(lines).toHaveLength(all.total + 1);
    const hostile = lines.find((l) => l.includes('attacker.invalid'))!;
    expect(hostile).toContain(`"'=HYPERLINK(""http://attacker.invalid"",""open me"")"`);
    expect(lines.some((l) => /(^|,)=/.test(l))).toBe(false);
  });

  it('narrows a report to an asset group', async () => {
    admin = await fresh(t, admin);
    const group = (
      await call(t.app, admin.token, {
        method: 'POST',
        url: `/api/v1/tenants/${tenant.id}/asset-groups`,
        payload: { name: 'Databases', filter: 'type = aws.rds.db_instance' },
        expect: 201,
      })
    ).json();
    const report = await generate(admin, { format: 'json', asset_group_id: group.id });
    expect(report.asset_group_id).toBe(group.id);
    await t.drain();
    const body = (await call(t.app, admin.token, { url: `${report.status_url}/download`, expect: 200 })).json();
    expect(body.report.scope).toEqual({ asset_group: { id: group.id, name: 'Databases', resources: 2 }, resources: 2 });
    const rds = await openFindings('&resource_type=aws.rds.db_instance');
    expect(body.findings.map((f: { id: string }) => f.id).sort()).toEqual(rds.items.map((f: { id: string }) => f.id).sort());
    expect(body.findings.every((f: { resource_type: string }) => f.resource_type === 'aws.rds.db_instance')).toBe(true);
    // Only controls failing for the group's members count against its score.
    const whole = (await call(t.app, admin.token, { url: `/api/v1/tenants/${tenant.id}/controls/status`, expect: 200 })).json();
    expect(body.report.overall_score).toBeGreaterThanOrEqual(whole.overall_score);
  });

  it('refuses bad requests with 400', async () => {
    admin = await fresh(t, admin);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ format: 'docx' }, /format/],
      [{ type: 'inventory' }, /type/],
      [{ framework: 'iso27001' }, /unknown framework "iso27001"/],
      [{ asset_group_id: 'group-1' }, /asset_group_id/],
      [{ asset_group_id: '00000000-0000-4000-8000-000000000000' }, /asset_group_id: no asset group 00000000-0000-4000-8000-000000000000 in this workspace/],
      [{ colour: 'blue' }, /colour/],
    ];
    for (const [payload, message] of cases) {
      const res = await call(t.app, admin.token, { method: 'POST', url: url(tenant.id, '/generate'), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.message).toMatch(message);
    }
    await call(t.app, admin.token, {
      method: 'PUT',
      url: `/api/v1/tenants/${tenant.id}/settings/compliance`,
      payload: { frameworks: [{ id: 'soc2', enabled: false }] },
      expect: 200,
    });
    const disabled = await call(t.app, admin.token, { method: 'POST', url: url(tenant.id, '/generate'), payload: { framework: 'soc2' } });
    expect(disabled.statusCode).toBe(400);
    expect(disabled.json().error.message).toBe('framework "soc2" is disabled for this tenant');
    await call(t.app, admin.token, {
      method: 'PUT',
      url: `/api/v1/tenants/${tenant.id}/settings/compliance`,
      payload: { frameworks: [{ id: 'soc2', enabled: true }] },
      expect: 200,
    });
    for (const bad of ['page=0', 'per_page=501', 'status=x']) expect((await call(t.app, admin.token, { url: `${url(tenant.id)}?${bad}` })).statusCode, bad).toBe(400);
  });
});

describe('failure, expiry and access', () => {
  it('fails a report whose asset group vanished (report.failed) and answers 409 to its download', async () => {
    admin = await fresh(t, admin);
    const group = (
      await call(t.app, admin.token, {
        method: 'POST',
        url: `/api/v1/tenants/${tenant.id}/asset-groups`,
        payload: { name: 'Short-lived', filter: 'type = aws.s3.bucket' },
        expect: 201,
      })
    ).json();
    const report = await generate(admin, { asset_group_id: group.id });
    await call(t.app, admin.token, { method: 'DELETE', url: `/api/v1/tenants/${tenant.id}/asset-groups/${group.id}`, expect: 204 });
    await t.drain();
    const failed = (await call(t.app, admin.token, { url: report.status_url, expect: 200 })).json();
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, download_url: null, error: 'the asset group of this report no longer exists' });
    const download = await call(t.app, admin.token, { url: `${report.status_url}/download` });
    expect(download.statusCode).toBe(409);
    expect(download.json().error.message).toBe('report failed: the asset group of this report no longer exists');
    const event = (await events(t, tenant.id, 'report.failed')).find((e) => (e.data as { report: { id: string } }).report.id === report.id)!;
    expect(event.data).toEqual({ report: { id: report.id, type: 'compliance', framework: null, format: 'pdf', error: failed.error } });
  });

  it('expires after the retention: 410, and the sweeper deletes the file', async () => {
    admin = await fresh(t, admin);
    const report = await generate(admin, { format: 'csv' });
    await t.drain();
    const done = (await call(t.app, admin.token, { url: report.status_url, expect: 200 })).json();
    const path = join((t.deps.artifacts as unknown as { root: string }).root, 'tenants', tenant.id, 'reports', `${report.id}.csv`);
    expect(existsSync(path)).toBe(true);
    t.clock.advance(RETENTION_MS);
    admin = await fresh(t, admin);
    const expired = (await call(t.app, admin.token, { url: report.status_url, expect: 200 })).json();
    expect(expired).toMatchObject({ status: 'expired', download_url: null });
    const gone = await call(t.app, admin.token, { url: done.download_url });
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error.message).toBe('report expired: its file was deleted after the retention period');
    expect((await sweepRetention(t.deps)).reports).toBeGreaterThanOrEqual(1);
    expect(existsSync(path)).toBe(false);
    expect((await call(t.app, admin.token, { url: done.download_url })).statusCode).toBe(410);
  });

  it("lists the workspace's reports, and keeps them from other tenants, workspaces and roles without reports:read", async () => {
    admin = await fresh(t, admin);
    const list = (await call(t.app, admin.token, { url: url(tenant.id), expect: 200 })).json();
    expect(list).toMatchObject({ page: 1, per_page: 50, total_pages: 1 });
    expect(list.total).toBe(6);
    const page = (await call(t.app, admin.token, { url: `${url(tenant.id)}?per_page=2&page=2`, expect: 200 })).json();
    expect(page.items.map((r: { id: string }) => r.id)).toEqual(list.items.slice(2, 4).map((r: { id: string }) => r.id));
    const report = list.items[0];

    for (const role of ['read-only', 'auditor'] as const) {
      const session = await fresh(t, tenant.users[role]);
      for (const request of [
        { url: url(tenant.id) },
        { url: report.status_url },
        { url: `${report.status_url}/download` },
        { method: 'POST' as const, url: url(tenant.id, '/generate'), payload: {} },
      ]) {
        const res = await call(t.app, session.token, request);
        expect(res.statusCode, `${role} ${request.url}`).toBe(403);
      }
    }
    const key = await createApiKey(t, { ...tenant, admin }, { permissions: ['reports:read'] });
    expect((await call(t.app, key.key, { url: url(tenant.id) })).statusCode).toBe(200);
    expect((await call(t.app, key.key, { method: 'POST', url: url(tenant.id, '/generate'), payload: { format: 'json' } })).statusCode).toBe(202);

    const otherAdmin = await fresh(t, other.admin);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const path of [`/${report.id}`, `/${report.id}/download`, `/${unknown}`, `/${unknown}/download`]) {
      const res = await call(t.app, otherAdmin.token, { url: url(other.id, path) });
      expect(res.statusCode, path).toBe(404);
      expect(res.json().error.message).toBe('report not found');
    }
    expect((await call(t.app, otherAdmin.token, { url: url(other.id) })).json().total).toBe(0);
    const ws = (await call(t.app, admin.token, { method: 'POST', url: '/api/v1/workspaces', payload: { name: 'reports-second' }, expect: 201 })).json();
    const switched = (await call(t.app, admin.token, { method: 'POST', url: '/api/v1/auth/switch-workspace', payload: { workspace_id: ws.id }, expect: 200 })).json();
    expect((await call(t.app, switched.token, { url: report.status_url })).statusCode).toBe(404);
    expect((await call(t.app, switched.token, { url: url(tenant.id) })).json().total).toBe(0);
  });
});
