import ExcelJS from 'exceljs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, events, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { createDeliveryApp, createIntegration, startReceiver, type Receiver } from '../integrations/helpers.js';

/**
 * Issue 22 items 1 and 3 through the API: a finding, its webhook payload, the POA&M item drafted from
 * it and the FedRAMP workbook carry the rule's failure wording (never its check title) and only the
 * rule's primary NIST controls; custom rules get "Fails: <title>" or their own wording; findings
 * written with an older text take the current one on the next audit.
 */
let t: TestApp;
let tenant: TenantFixture;
let token: string;
let receiver: Receiver;

const RDS = 'aws-rds-instance-storage-encrypted';
const IMDS = 'aws-ec2-instance-imdsv2-required';
const rdsNode = fixtureNode(RDS, 'violating', 'wording-db');
const imdsNode = fixtureNode(IMDS, 'violating', 'wording-instance');
const rdsFinding = `${RDS}:${nodeIdOf(rdsNode)}`;
const imdsFinding = `${IMDS}:${nodeIdOf(imdsNode)}`;
const api = (path: string) => `/api/v1/tenants/${tenant.id}${path}`;
const finding = async (id: string) => (await call(t.app, token, { url: api(`/findings/${encodeURIComponent(id)}`), expect: 200 })).json();

beforeAll(async () => {
  t = await createDeliveryApp();
  tenant = await buildTenant(t);
  receiver = await startReceiver();
  token = tenant.admin.token;
  await createIntegration(t, token, tenant.id, { type: 'webhook', name: 'hook', config: { url: `${receiver.url}/hook`, secret: 'wording-secret', events: ['finding.created'] } });
  await putNodes(t, token, tenant.id, [rdsNode, imdsNode]);
  await audit(t, token, tenant.id);
  await t.drain();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});
beforeEach(async () => {
  token = (await fresh(t, tenant.admin)).token;
});

describe('built-in rules', () => {
  it('a finding says what is wrong; the rule keeps its check title for listings', async () => {
    const f = await finding(rdsFinding);
    expect(f.title).toBe('RDS DB instance storage is not encrypted');
    expect(f.description).toMatch(/^The instance's storage is not encrypted/);
    const rule = (await call(t.app, token, { url: api(`/rules/${RDS}`), expect: 200 })).json();
    expect(rule).toMatchObject({
      title: 'RDS DB instance storage is encrypted',
      finding_title: 'RDS DB instance storage is not encrypted',
      nist_controls: [
        { control_id: 'SC-28(1)', source: 'prowler' },
        { control_id: 'SC-28', source: 'aws-security-hub' },
      ],
    });
    expect(rule.related_mappings).toContainEqual({ framework: 'nist-800-53', control_id: 'AU-9(3)' });
    expect(rule.framework_mappings).not.toContainEqual({ framework: 'nist-800-53', control_id: 'AU-9(3)' });
    // The finding fails the primary NIST controls only, and the other frameworks' mappings.
    const nist = f.framework_mappings.filter((m: { framework: string }) => m.framework === 'nist-800-53').map((m: { control_id: string }) => m.control_id);
    expect(nist.sort()).toEqual(['SC-28', 'SC-28(1)']);
  });

  it('the finding.created event and the webhook payload carry the failure wording', async () => {
    const created = (await events(t, tenant.id, 'finding.created')).map((e) => (e.data as { finding: { id: string; title: string } }).finding);
    expect(created.find((e) => e.id === imdsFinding)!.title).toBe('EC2 instance does not require IMDSv2');
    const payloads = receiver.requests.map((r) => JSON.parse(r.body) as { data: { finding: { id: string; title: string } } });
    expect(payloads.find((p) => p.data.finding.id === rdsFinding)!.data.finding.title).toBe('RDS DB instance storage is not encrypted');
    expect(payloads.map((p) => p.data.finding.title)).not.toContain('RDS DB instance storage is encrypted');
  });

  it('/controls/gaps lists the primary NIST controls of failing rules, not the long tail', async () => {
    const gaps = (await call(t.app, token, { url: api('/controls/gaps?framework=nist-800-53&per_page=500'), expect: 200 })).json().items;
    const failing = gaps
      .filter((g: { status: string }) => g.status === 'failing')
      .map((g: { control_id: string }) => g.control_id)
      .sort();
    expect(failing).toEqual(['AC-3', 'SC-28', 'SC-28(1)']);
  });

  it('the JSON report lists the findings in their failure wording and, as failing, the primary NIST controls only', async () => {
    const started = (await call(t.app, token, { method: 'POST', url: api('/reports/generate'), payload: { format: 'json', framework: 'nist-800-53' }, expect: 202 })).json();
    await t.drain();
    const done = (await call(t.app, token, { url: started.status_url, expect: 200 })).json();
    const body = (await call(t.app, token, { url: done.download_url, expect: 200 })).json();
    expect(body.findings.map((f: { title: string }) => f.title).sort()).toEqual(['EC2 instance does not require IMDSv2', 'RDS DB instance storage is not encrypted']);
    const failing = body.report.failing_controls.map((c: { control_id: string }) => c.control_id).sort();
    expect(failing).toEqual(['AC-3', 'SC-28', 'SC-28(1)']);
  });

  it('a POA&M item drafted from a finding takes its failure wording and its primary NIST controls; so does the FedRAMP workbook', async () => {
    const item = (await call(t.app, token, { method: 'POST', url: api('/poam'), payload: { finding_id: imdsFinding }, expect: 201 })).json();
    // Prowler maps the IMDSv2 check to 15 NIST controls, AC-4(28) "Linear Filter Pipelines" among them.
    expect(item).toMatchObject({ weakness_name: 'EC2 instance does not require IMDSv2', control_ids: ['AC-3'] });
    const res = await call(t.app, token, { url: api('/poam/export?format=fedramp'), expect: 200 });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
    const open = workbook.getWorksheet('Open POA&M Items')!;
    const header = (open.getRow(5).values as ExcelJS.CellValue[]).map((v) => String(v ?? ''));
    const cell = (name: string) => String(open.getRow(8).getCell(header.indexOf(name)).value ?? '');
    expect(cell('Weakness Name')).toBe('EC2 instance does not require IMDSv2');
    expect(cell('Controls')).toBe('AC-3');
    const csv = (await call(t.app, token, { url: api('/poam/export?format=csv'), expect: 200 })).body;
    expect(csv).toContain('EC2 instance does not require IMDSv2');
    const oscal = (await call(t.app, token, { url: api('/poam/export?format=oscal'), expect: 200 })).json();
    expect(JSON.stringify(oscal)).toContain('EC2 instance does not require IMDSv2');
  });

  it('findings written with an older text take the current wording and controls on the next audit', async () => {
    // As a release before this one stored it: the check title and every Prowler NIST mapping.
    const db = t.deps.database.db;
    await db
      .insertInto('finding_texts')
      .values({
        tenant_id: tenant.id,
        workspace_id: tenant.defaultWorkspaceId,
        id: 'old-text',
        title: 'RDS DB instance storage is encrypted',
        description: 'Checks that the instance storage is encrypted.',
        remediation: 'Migrate.',
        framework_mappings: JSON.stringify([{ framework: 'nist-800-53', control_id: 'AU-9(3)' }]),
      } as never)
      .execute();
    await db.updateTable('finding_rows').set({ text_id: 'old-text' }).where('workspace_id', '=', tenant.defaultWorkspaceId).where('id', '=', rdsFinding).execute();
    expect((await finding(rdsFinding)).title).toBe('RDS DB instance storage is encrypted');
    await audit(t, token, tenant.id);
    const f = await finding(rdsFinding);
    expect(f.title).toBe('RDS DB instance storage is not encrypted');
    expect(f.framework_mappings).not.toContainEqual({ framework: 'nist-800-53', control_id: 'AU-9(3)' });
  });
});

describe('custom rules', () => {
  const base = {
    description: 'Buckets carry an owner tag.',
    severity: 'LOW',
    resource_type: 'aws.rds.db_instance',
    framework: 'soc2',
    control_id: 'CC6.1',
    condition: '!has(resource.tags.Owner)',
    remediation: 'Tag the database with its owner.',
  };

  it('without a finding title, findings read "Fails: <title>", and the wording follows a renamed title', async () => {
    const created = (
      await call(t.app, token, { method: 'POST', url: api('/rules'), payload: { id: 'owner-tag', title: 'Database has an owner tag', ...base }, expect: 201 })
    ).json();
    expect(created).toMatchObject({ title: 'Database has an owner tag', finding_title: 'Fails: Database has an owner tag', nist_controls: [], related_mappings: [] });
    await audit(t, token, tenant.id);
    expect((await finding(`owner-tag:${nodeIdOf(rdsNode)}`)).title).toBe('Fails: Database has an owner tag');
    // PUT with what GET showed, title renamed: the generated wording follows it rather than freezing.
    const shown = (await call(t.app, token, { url: api('/rules/owner-tag'), expect: 200 })).json();
    const renamed = (await call(t.app, token, { method: 'PUT', url: api('/rules/owner-tag'), payload: { ...shown, title: 'Database names its owner' }, expect: 200 })).json();
    expect(renamed.finding_title).toBe('Fails: Database names its owner');
  });

  it('may set its own wording, which existing findings take on the next audit', async () => {
    const shown = (await call(t.app, token, { url: api('/rules/owner-tag'), expect: 200 })).json();
    const updated = (
      await call(t.app, token, {
        method: 'PUT',
        url: api('/rules/owner-tag'),
        payload: { ...shown, finding_title: 'Database has no owner tag', finding_description: 'Nobody is named as owner of the database.' },
        expect: 200,
      })
    ).json();
    expect(updated).toMatchObject({ finding_title: 'Database has no owner tag', finding_description: 'Nobody is named as owner of the database.' });
    await audit(t, token, tenant.id);
    expect(await finding(`owner-tag:${nodeIdOf(rdsNode)}`)).toMatchObject({ title: 'Database has no owner tag', description: 'Nobody is named as owner of the database.' });
  });

  it('refuses a finding title that repeats the title, spans lines or is too long (400)', async () => {
    const same = await call(t.app, token, {
      method: 'POST',
      url: api('/rules'),
      payload: { id: 'same-title', title: 'Database has a tag', finding_title: 'database has a tag', ...base },
    });
    expect(same.statusCode).toBe(400);
    expect(same.json().error.message).toMatch(/finding_title must word the failure/);
    const lines = await call(t.app, token, {
      method: 'POST',
      url: api('/rules'),
      payload: { id: 'two-lines', title: 'Database has a tag', finding_title: 'No tag\nat all', ...base },
    });
    expect(lines.statusCode).toBe(400);
    const long = await call(t.app, token, {
      method: 'POST',
      url: api('/rules'),
      payload: { id: 'long-title', title: 'Database has a tag', finding_title: 'x'.repeat(201), ...base },
    });
    expect(long.statusCode).toBe(400);
  });
});
