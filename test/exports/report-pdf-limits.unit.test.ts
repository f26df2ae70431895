import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PDF_MAX_FINDINGS, pdfReport } from '../../src/modules/exports/reports/render-pdf.js';
import { DEFINITIONS } from '../../src/modules/exports/reports/report-method.js';
import type { ReportContent, ReportFinding } from '../../src/modules/exports/reports/report-data.js';
import { pdfAllText, pdfPages } from './pdf-text.js';

/**
 * What docs/exports.md promises of the PDF, on a report built here (report.test.ts and
 * report-numbers.test.ts generate real ones): every failing control listed, page numbers, text in
 * Greek, Cyrillic and CJK printed as itself and kept within its column, the method and sign-off.
 */

const CJK_NAME = '数据湖-生产 Ελληνικά';
const CYRILLIC_NAME = 'Продакшн-база-данных';
const JAPANESE_KOREAN = 'ログ保管庫 로그-저장소';

function finding(i: number, overrides: Partial<ReportFinding> = {}): ReportFinding {
  return {
    id: `rule-${i}:res-${i}`,
    severity: ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'][i % 5]!,
    title: `S3 bucket res-${i} does not block public access`,
    rule_id: `rule-${i}`,
    framework: 'nist-800-53',
    control_id: 'AC-3',
    resource_id: `arn:aws:s3:::bucket-with-a-rather-long-name-${i}-${'x'.repeat(40)}`,
    resource_type: 'aws.s3.bucket',
    resource_name: `bucket-${i}`,
    region: 'eu-west-1',
    account_id: '123456789012',
    first_seen: new Date('2026-11-01T00:00:00Z'),
    last_seen: new Date('2026-11-28T00:00:00Z'),
    remediation: 'Turn on S3 Block Public Access for the bucket and its account.',
    ...overrides,
  };
}

function content(failing: number, findings: ReportFinding[], history = 3): ReportContent {
  return {
    summary: {
      report_id: '7d1c1c52-5b0e-4d8e-9a57-2b9e8a3f1d20',
      title: 'Compliance report',
      generated_at: '2026-11-28T12:00:00.000Z',
      tenant: { id: 't', name: 'Acme 数据' },
      workspace: { id: 'w', name: 'Default' },
      scope: { asset_group: null, resources: findings.length },
      frameworks: [
        {
          id: 'nist-800-53',
          name: 'NIST SP 800-53 Rev. 5',
          score: 10,
          applicable_controls: 300,
          passing_controls: 300 - failing - 5,
          failing_controls: failing,
          unknown_controls: 5,
          not_attested_controls: 0,
        },
      ],
      overall_score: 10,
      findings_by_severity: { CRITICAL: 1, HIGH: 1, MEDIUM: 1, LOW: 1, INFO: findings.length - 4 },
      total_findings: findings.length,
      failing_controls: Array.from({ length: failing }, (_, i) => ({
        framework: 'nist-800-53',
        control_id: `ZZ-${i + 1}`,
        title: `control ${i + 1}`,
        findings: 1,
        top_severity: 'HIGH',
      })),
      unknown_controls: Array.from({ length: 5 }, (_, i) => ({ framework: 'nist-800-53', control_id: `UU-${i + 1}`, title: `unknown control ${i + 1}`, evaluations: 2 })),
      score_history: Array.from({ length: history }, (_, i) => ({
        at: new Date(Date.UTC(2026, 10, 20 + i)).toISOString(),
        overall: 40 + i * 5,
        frameworks: { 'nist-800-53': 40 + i * 5 },
      })),
      method: {
        resources: { total: findings.length, by_type: [{ type: 'aws.s3.bucket', count: findings.length }] },
        hosts: { count: 1, first_report_at: '2026-11-27T10:00:00.000Z', last_report_at: '2026-11-28T10:00:00.000Z' },
        last_audit: { id: 'a1', started_at: '2026-11-28T11:00:00.000Z', finished_at: '2026-11-28T11:01:00.000Z', resources_evaluated: 4, rules_evaluated: 80, evaluations: 320 },
        rules: {
          builtin: 1,
          host: 1,
          custom: 0,
          list: [
            { id: 'aws-s3-block-public', title: 'S3 bucket blocks public access', source: 'built-in', severity: 'HIGH', controls: ['AC-3'] },
            { id: 'host-ssh-root-login', title: 'SSH does not permit root login', source: 'host', severity: 'HIGH', controls: ['AC-17'] },
          ],
        },
        not_evaluated: {
          unknown_controls: 5,
          unknown_evaluations: 10,
          unknown_resources: 3,
          by_rule: [
            {
              rule_id: 'aws-s3-bucket-versioning',
              reason: 'missing_configuration',
              resources: 3,
              missing_paths: ['supplementaryConfiguration.BucketVersioningConfiguration.status'],
            },
          ],
          suspended_rules: [],
          not_attested_controls: 0,
        },
        definitions: DEFINITIONS,
      },
    },
    findings: async function* () {
      for (let i = 0; i < findings.length; i += 500) yield findings.slice(i, i + 500);
    },
  };
}

async function render(c: ReportContent): Promise<Buffer> {
  const { stream, done } = pdfReport(c);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  await done;
  const pdf = Buffer.concat(chunks);
  if (process.env.REPORT_PDF_OUT) writeFileSync(process.env.REPORT_PDF_OUT, pdf);
  return pdf;
}

describe('PDF report', () => {
  it('lists every failing control, numbers its pages, and has the method and sign-off sections', async () => {
    const pdf = await render(
      content(212, [finding(0, { resource_name: CJK_NAME }), finding(1, { resource_name: CYRILLIC_NAME }), finding(2, { resource_name: JAPANESE_KOREAN }), finding(3), finding(4)]),
    );
    const pages = await pdfPages(pdf);
    const text = pages.map((p) => p.text).join('\n');
    expect(text).toContain('Failing controls: 212');
    for (let i = 1; i <= 212; i++) expect(text).toMatch(new RegExp(`^ZZ-${i} control ${i} 1 HIGH$`, 'm'));
    expect(text).not.toMatch(/more \(see the JSON report\)/);
    // "Page n of N" at the foot of every page.
    pages.forEach((page, i) => expect(page.lines.at(-1)).toMatch(new RegExp(`Page ${i + 1} of ${pages.length}$`)));
    for (const section of [
      'Summary',
      'Method',
      'What was evaluated',
      'When',
      'By which rules',
      'What could not be evaluated',
      'Definitions',
      'Evaluations without an outcome',
      'Unknown controls: 5',
      'Active findings: 5',
      'Rules: 2',
      'Sign-off',
      'Prepared by',
      'Reviewed by',
      'Approved by',
      'Signature',
    ]) {
      expect(text, section).toContain(section);
    }
    // Each finding with its full resource id (wrapped within its column) and its remediation.
    const columns = pages.flatMap((p) => p.columns).join('\n');
    for (let i = 0; i < 5; i++) expect(columns).toContain(finding(i).resource_id);
    expect(text).toContain('Remediation: Turn on S3 Block Public Access');
  }, 60_000);

  it('prints Greek, Cyrillic and CJK resource names as themselves, within their column', async () => {
    // A name that wraps onto a second line, and one so long it is cut (with an ellipsis) after four.
    const medium = `${CJK_NAME} ${CYRILLIC_NAME} ${JAPANESE_KOREAN}`;
    const long = `${CJK_NAME.repeat(6)}${CYRILLIC_NAME.repeat(3)}`;
    const pdf = await render(
      content(3, [
        finding(0, { resource_name: CJK_NAME }),
        finding(1, { resource_name: CYRILLIC_NAME }),
        finding(2, { resource_name: JAPANESE_KOREAN }),
        finding(3, { resource_name: medium, title: `${'Unbroken'.repeat(20)} ${long}` }),
        finding(4, { resource_name: long }),
      ]),
    );
    const pages = await pdfPages(pdf);
    const text = pages.map((p) => p.text).join('\n');
    // No piece of text of the findings table crosses into the next column (the header gives the edges).
    const findingsPages = pages.filter((p) => p.text.includes('Finding and remediation'));
    const header = findingsPages[0]!.items;
    const headerY = header.find((i) => i.str === 'Finding and remediation')!.y;
    const edge = (title: string) => header.find((i) => i.str === title && Math.abs(i.y - headerY) < 1)!.x;
    const [finding_, resource, control] = [edge('Finding and remediation'), edge('Resource'), edge('Control')];
    // The table's rows: below its header on each page, above the footer or the next section ("Rules").
    const rows = findingsPages.flatMap((p) => {
      const top = p.items.find((i) => i.str === 'Finding and remediation')!.y;
      const bottom = p.items.find((i) => i.str.startsWith('Rules:'))?.y ?? 60;
      return p.items.filter((i) => i.y < top - 1 && i.y > bottom && i.str.trim() !== '');
    });
    const inColumn = (from: number, to: number) => rows.filter((i) => i.x >= from - 1 && i.x < to - 1);
    const resources = inColumn(resource, control)
      .map((i) => i.str)
      .join('')
      .replace(/\s+/g, '');
    expect(resources).toContain(medium.replace(/\s+/g, ''));
    expect(resources).toMatch(new RegExp(`${CJK_NAME.replace(/\s+/g, '').repeat(4)}[^…]*…`));
    for (const item of inColumn(finding_, resource)) expect(item.x + item.width, item.str).toBeLessThanOrEqual(resource);
    for (const item of inColumn(resource, control)) expect(item.x + item.width, item.str).toBeLessThanOrEqual(control);
    expect(text).toContain(CJK_NAME);
    expect(text).toContain(CYRILLIC_NAME);
    expect(text).toContain(JAPANESE_KOREAN);
    expect(text).toContain('Acme 数据');
    // The embedded fonts, not the standard Helvetica (which prints Latin-1 only).
    const raw = pdf.toString('latin1');
    expect(raw).toMatch(/\/BaseFont \/[A-Z]{6}\+NotoSans-Regular/);
    expect(raw).toMatch(/\/BaseFont \/[A-Z]{6}\+NotoSansCJKsc-Regular/);
    expect(raw).not.toContain('/Helvetica');
  }, 60_000);

  it(`lists at most ${PDF_MAX_FINDINGS} findings and says where the rest are`, async () => {
    const many = Array.from({ length: PDF_MAX_FINDINGS + 7 }, (_, i) => finding(i));
    const text = await pdfAllText(await render(content(2, many, 1)));
    expect(text).toContain('The 7 less severe findings are in the JSON and CSV reports.');
    expect(text).toContain('Score history: none yet.');
  }, 120_000);
});
