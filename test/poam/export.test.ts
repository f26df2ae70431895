import { readFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, fresh, type TenantFixture } from '../harness/identity.js';
import { putNodes } from '../harness/graph.js';
import { audit, fixtureNode, nodeIdOf } from '../harness/compliance.js';
import { manualItem, poamApi } from './helpers.js';
import { DOMParser } from '@xmldom/xmldom';
import { CSV_COLUMNS } from '../../src/modules/poam/export/csv.js';
import { entryData, readZip } from '../../src/modules/poam/export/zip.js';
import { collectExport, MAX_EXPORT_ITEMS } from '../../src/modules/poam/export/collect.js';
import { filterOf } from '../../src/modules/poam/items-service.js';

/**
 * GET /poam/export in its four formats. The FedRAMP workbook is read back with exceljs and compared
 * with the official template itself (sheet names, header rows); the OSCAL document is validated
 * against NIST's OSCAL 1.0.6 POA&M JSON schema (test/fixtures/poam).
 */
let t: TestApp;
let tenant: TenantFixture;
let token: string;
let api: ReturnType<typeof poamApi>;
const RULE = 'aws-s3-bucket-versioning';
const findingId = `${RULE}:${nodeIdOf(fixtureNode(RULE, 'violating', 'export-bucket'))}`;
const TEMPLATE = 'content/poam/FedRAMP-POAM-Template.xlsx';

const exportOf = (format: string, query = '') => call(t.app, token, { url: `${api.base}/export?format=${format}${query ? `&${query}` : ''}`, expect: 200 });

beforeAll(async () => {
  t = await createTestApp();
  tenant = await buildTenant(t, { name: 'Acme Cloud' });
  api = poamApi(t, tenant.id);
  token = tenant.users['security-analyst'].token;
  await putNodes(t, token, tenant.id, [fixtureNode(RULE, 'violating', 'export-bucket')]);
  await audit(t, token, tenant.id);
  // POAM-1 from the finding, with milestones (one done) and evidence; POAM-2 manual with a vendor
  // dependency and a deviation request; POAM-3 closed.
  await api.create(
    token,
    {
      finding_id: findingId,
      point_of_contact: 'storage-team',
      milestones: [
        { date: '2026-12-01', description: 'Enable versioning', done: true },
        { date: '2026-12-20', description: 'Verify lifecycle rules' },
      ],
    },
    201,
  );
  await api.upload(token, 'POAM-1', 'versioning status: Enabled', 'versioning.txt');
  await api.comment(token, 'POAM-1', 'Change ticket CHG-1042');
  await api.create(token, manualItem({ vendor_dependency: true, deviation_request: 'Operational Requirement : the IdP cannot enforce MFA for service users' }), 201);
  await api.create(token, manualItem({ weakness_name: 'Old TLS on the load balancer', control_ids: ['SC-8', 'nist-800-171:3.13.8'], severity: 'LOW' }), 201);
  await api.status(token, 'POAM-3', { status: 'in_progress' }, 200);
  await api.status(token, 'POAM-3', { status: 'verification' }, 200);
  await api.upload(token, 'POAM-3', 'tls scan: TLS 1.2+ only', 'tls.txt');
  await api.status(token, 'POAM-3', { status: 'closed', comment: 'rescan clean' }, 200);
});
afterAll(() => t.close());
beforeEach(async () => {
  token = (await fresh(t, tenant.users['security-analyst'])).token;
});

async function workbookOf(buffer: Buffer) {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(buffer as unknown as ArrayBuffer);
  return workbook;
}

const text = (v: ExcelJS.CellValue) => (v === null || v === undefined ? '' : v instanceof Date ? v.toISOString().slice(0, 10) : String(v));

describe('format=fedramp', () => {
  it('is the official template: same sheets and header rows, open items from row 8 of the open sheet, closed items on the closed sheet', async () => {
    const res = await exportOf('fedramp', 'impact_level=Moderate&system_name=Acme%20Prod');
    expect(res.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers['content-disposition']).toMatch(/attachment; filename="poam-fedramp-\d{4}-\d{2}-\d{2}\.xlsx"/);
    const exported = await workbookOf(res.rawPayload);
    const template = new ExcelJS.Workbook();
    await template.xlsx.readFile(TEMPLATE);

    expect(exported.worksheets.map((w) => w.name)).toEqual(template.worksheets.map((w) => w.name));
    expect(exported.worksheets.map((w) => w.name)).toEqual(['Open POA&M Items', 'Closed POA&M Items', 'Configuration Findings', 'Record of Changes']);
    for (const name of ['Open POA&M Items', 'Closed POA&M Items', 'Configuration Findings']) {
      const headers = (exported.getWorksheet(name)!.getRow(5).values as ExcelJS.CellValue[]).slice(1, 32).map(text);
      expect(headers, name).toEqual((template.getWorksheet(name)!.getRow(5).values as ExcelJS.CellValue[]).slice(1, 32).map(text));
      expect(headers[0]).toBe('POAM ID');
      expect(headers[30]).toBe('Service Name');
      const sheet = exported.getWorksheet(name)!;
      expect([text(sheet.getCell('A3').value), text(sheet.getCell('B3').value), text(sheet.getCell('C3').value), text(sheet.getCell('D3').value)]).toEqual([
        'Acme Cloud',
        'Acme Prod',
        'Moderate',
        t.clock.now().toISOString().slice(0, 10),
      ]);
    }

    const open = exported.getWorksheet('Open POA&M Items')!;
    // The template's guidance rows stay; its example item (row 8) is replaced by the data.
    expect(text(open.getCell('A6').value)).toBe('Unique identifier for each POAM Item');
    const header = (open.getRow(5).values as ExcelJS.CellValue[]).map(text);
    const rowOf = (sheet: ExcelJS.Worksheet, n: number) => Object.fromEntries(header.slice(1, 32).map((h, i) => [h, text(sheet.getRow(n).getCell(i + 1).value)]));
    const first = rowOf(open, 8);
    expect(first).toMatchObject({
      'POAM ID': 'POAM-1',
      // The rule's failure wording, not its check title ("S3 bucket has object versioning enabled").
      'Weakness Name': 'S3 bucket versioning is not enabled',
      'Weakness Detector Source': 'ControlGraph compliance audit (nist-800-53)',
      'Weakness Source Identifier': RULE,
      'Point of Contact': 'storage-team',
      'Original Detection Date': t.clock.now().toISOString().slice(0, 10),
      'Planned Milestones': '(1) 2026-12-01: Enable versioning\n\n(2) 2026-12-20: Verify lifecycle rules',
      'Milestone Changes': '(1) Complete 2026-12-01 : Enable versioning',
      'Vendor Dependency': 'No',
      'Original Risk Rating': 'Moderate',
      'Risk Adjustment': 'No',
      'False Positive': 'No',
      'Operational Requirement': 'No',
    });
    expect(first['Asset Identifier']!.startsWith(nodeIdOf(fixtureNode(RULE, 'violating', 'export-bucket')))).toBe(true);
    // The rule's primary NIST control only (Prowler maps the check to 14 NIST controls).
    expect(first.Controls).toBe('CP-9');
    expect(first['Supporting Documents']).toMatch(/^Remediation Evidence : versioning\.txt \(sha256 [0-9a-f]{64}\)$/);
    expect(first.Comments).toContain('Change ticket CHG-1042');
    expect(first['Scheduled Completion Date']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(open.getRow(8).getCell(11).value).toBeInstanceOf(Date);

    const second = rowOf(open, 9);
    expect(second).toMatchObject({
      'POAM ID': 'POAM-2',
      Controls: 'IA-2(1), AC-2',
      'Weakness Detector Source': 'Manual entry',
      'Vendor Dependency': 'Yes',
      'Original Risk Rating': 'High',
      'Operational Requirement': 'Pending',
      'Risk Adjustment': 'No',
      'Deviation Rationale': 'Operational Requirement : the IdP cannot enforce MFA for service users',
    });
    // One row per open item: nothing after them (the template's completion-date formula stays below).
    expect(text(open.getCell('A10').value)).toBe('');
    expect(open.getCell('L10').formula).toContain('K10+30');

    const closed = exported.getWorksheet('Closed POA&M Items')!;
    // "Applicable 800-53 Control(s)" never holds another framework's id: that one goes to Comments.
    const third = rowOf(closed, 6);
    expect(third).toMatchObject({ 'POAM ID': 'POAM-3', 'Weakness Name': 'Old TLS on the load balancer', Controls: 'SC-8', 'Original Risk Rating': 'Low' });
    expect(third.Comments).toContain('Controls of other frameworks: nist-800-171:3.13.8');
    expect(text(closed.getCell('A7').value)).toBe('');
  });

  it('every XML part is well-formed; the calculation chain is gone from the package and its references', async () => {
    const res = await exportOf('fedramp');
    const entries = readZip(res.rawPayload);
    const names = entries.map((e) => e.name);
    expect(names).not.toContain('xl/calcChain.xml');
    expect(names).toEqual(expect.arrayContaining(['xl/workbook.xml', 'xl/worksheets/sheet1.xml', 'xl/worksheets/sheet2.xml', 'xl/styles.xml', 'xl/sharedStrings.xml']));
    for (const entry of entries) {
      const xml = entryData(entry).toString('utf8');
      expect(xml).not.toContain('calcChain');
      const errors: string[] = [];
      new DOMParser({
        onError: (level: string, message: string) => {
          if (level !== 'warning') errors.push(message);
        },
      }).parseFromString(xml, 'text/xml');
      expect(errors, entry.name).toEqual([]);
    }
  });

  it('an empty POA&M is the bare template without its example item; the list filters apply', async () => {
    const res = await exportOf('fedramp', 'status=closed');
    const workbook = await workbookOf(res.rawPayload);
    const open = workbook.getWorksheet('Open POA&M Items')!;
    expect(text(open.getCell('A8').value)).toBe('');
    expect(text(open.getCell('C8').value)).toBe('');
    expect(text(workbook.getWorksheet('Closed POA&M Items')!.getCell('A6').value)).toBe('POAM-3');
  });
});

describe('format=csv', () => {
  it('OMB-style columns, one row per item, RFC 4180 quoting of multi-line cells', async () => {
    const res = await exportOf('csv');
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.body.endsWith('\r\n')).toBe(true);
    const rows: string[][] = parse(res.body, { relax_column_count: false });
    expect(rows[0]).toEqual([...CSV_COLUMNS]);
    expect(rows[0]!.slice(0, 10)).toEqual([
      'POA&M ID',
      'Weakness',
      'Weakness Description',
      'Point of Contact',
      'Resources Required',
      'Scheduled Completion Date',
      'Milestones with Completion Dates',
      'Changes to Milestones',
      'Identified In',
      'Status',
    ]);
    expect(rows).toHaveLength(4);
    const records = rows.slice(1).map((r) => Object.fromEntries(rows[0]!.map((h, i) => [h, r[i]])));
    expect(records.map((r) => [r['POA&M ID'], r.Status, r['Workflow Status']])).toEqual([
      ['POAM-1', 'Ongoing', 'open'],
      ['POAM-2', 'Ongoing', 'open'],
      ['POAM-3', 'Completed', 'closed'],
    ]);
    expect(records[0]!['Milestones with Completion Dates']).toBe('(1) 2026-12-01: Enable versioning\n\n(2) 2026-12-20: Verify lifecycle rules');
    expect(records[0]!['Finding ID']).toBe(findingId);
    expect(records[1]!['Vendor Dependency']).toBe('Yes');
    expect(records[2]!.Controls).toBe('SC-8, nist-800-171:3.13.8');
  });

  it('neutralises cells that a spreadsheet would run as formulas', async () => {
    await api.create(token, manualItem({ weakness_name: '=HYPERLINK("http://x","y")', point_of_contact: '+team' }), 201);
    const rows: string[][] = parse((await exportOf('csv', 'status=open&severity=HIGH&point_of_contact=%2Bteam')).body);
    expect(rows[1]![1]).toBe(`'=HYPERLINK("http://x","y")`);
    expect(rows[1]![3]).toBe(`'+team`);
    await api.remove(token, rows[1]![0]!, 200);
  });
});

describe('format=json', () => {
  it('the items as the API shows them', async () => {
    const res = await exportOf('json');
    expect(res.headers['content-disposition']).toMatch(/poam-\d{4}-\d{2}-\d{2}\.json/);
    const body = res.json();
    expect(body).toMatchObject({ tenant_id: tenant.id, workspace_id: tenant.defaultWorkspaceId, total: 3 });
    expect(body.items).toEqual((await api.list(token, '', 200)).json().items);
    expect(Object.keys(body.items[0])).toEqual(
      expect.arrayContaining([
        'id',
        'weakness_name',
        'weakness_description',
        'control_ids',
        'severity',
        'point_of_contact',
        'scheduled_completion',
        'milestones',
        'status',
        'comments',
        'vendor_dependency',
        'deviation_request',
        'finding_id',
        'evidence_ids',
        'created_at',
        'updated_at',
      ]),
    );
    expect((await call(t.app, token, { url: `${api.base}/export`, expect: 200 })).json().total).toBe(3);
  });

  it('400 for an unknown format or parameter', async () => {
    expect((await call(t.app, token, { url: `${api.base}/export?format=pdf` })).statusCode).toBe(400);
    expect((await call(t.app, token, { url: `${api.base}/export?format=json&foo=1` })).statusCode).toBe(400);
  });
});

describe('format=oscal', () => {
  const schema = JSON.parse(readFileSync('test/fixtures/poam/oscal_poam_schema-1.0.6.json', 'utf8'));
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  const validate = ajv.compile(schema);

  it('is valid against the OSCAL 1.0.6 POA&M JSON schema and carries the items', async () => {
    const res = await exportOf('oscal');
    const doc = res.json();
    const valid = validate(doc);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    const poam = doc['plan-of-action-and-milestones'];
    expect(poam.metadata['oscal-version']).toBe('1.0.6');
    expect(poam['poam-items']).toHaveLength(3);
    expect(poam['poam-items'].map((i: { props: Array<{ name: string; value: string }> }) => i.props.find((p) => p.name === 'POAM-ID')!.value)).toEqual([
      'POAM-1',
      'POAM-2',
      'POAM-3',
    ]);
    const risk = poam.risks[0];
    expect(risk.props.filter((p: { name: string }) => p.name === 'impacted-control-id').map((p: { value: string }) => p.value)).toContain('cp-9');
    expect(risk.status).toBe('open');
    expect(risk.remediations[0].tasks).toHaveLength(2);
    expect(poam.risks[1].status).toBe('deviation-requested');
    expect(poam.risks[2].status).toBe('closed');
    expect(poam.observations).toHaveLength(1);
    expect(poam['back-matter'].resources).toHaveLength(2);
    // Stable UUIDs across exports, a new document UUID each time.
    const again = (await exportOf('oscal')).json()['plan-of-action-and-milestones'];
    expect(again['poam-items'][0].uuid).toBe(poam['poam-items'][0].uuid);
    expect(again.uuid).not.toBe(poam.uuid);
  });

  it('the validator does reject a broken document', () => {
    expect(validate({ 'plan-of-action-and-milestones': { uuid: 'not-a-uuid', metadata: {}, 'poam-items': [] } })).toBe(false);
  });

  it('409 when no item matches (OSCAL needs at least one poam-item)', async () => {
    const res = await call(t.app, token, { url: `${api.base}/export?format=oscal&status=verification` });
    expect(res.statusCode).toBe(409);
  });
});

describe('size limit', () => {
  it(`refuses (400) a selection above the limit (${MAX_EXPORT_ITEMS} items) instead of cutting it short`, async () => {
    const scope = { tenantId: tenant.id, workspaceId: tenant.defaultWorkspaceId };
    // The same query the route runs, with a limit of 2 so that three items exceed it.
    await expect(collectExport(t.deps.database.db, scope, filterOf({}), t.clock.now(), 2)).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('the export would hold 3 items, at most 2 per export'),
      details: { total: 3, max_items: 2 },
    });
    expect((await collectExport(t.deps.database.db, scope, filterOf({ status: 'closed' }), t.clock.now(), 2)).items.map((i) => i.id)).toEqual(['POAM-3']);
  });
});

describe('permissions and tenancy', () => {
  it('read-only may export; another tenant exports its own (empty) POA&M', async () => {
    expect((await call(t.app, tenant.users['read-only'].token, { url: `${api.base}/export?format=csv` })).statusCode).toBe(200);
    const other = await buildTenant(t);
    const res = await call(t.app, other.admin.token, { url: `/api/v1/tenants/${other.id}/poam/export?format=json`, expect: 200 });
    expect(res.json().total).toBe(0);
    expect((await call(t.app, other.admin.token, { url: `${api.base}/export?format=json` })).statusCode).toBe(403);
  });
});
