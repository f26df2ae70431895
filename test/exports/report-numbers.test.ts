import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { buildTenant, call, createApiKey, fresh, type Session, type TenantFixture } from '../harness/identity.js';
import { audit, fixtureNode } from '../harness/compliance.js';
import { projectPath } from '../../src/platform/paths.js';
import { buildReport, sendReport } from '../agents/helpers.js';
import { pdfPages, type PdfPage } from './pdf-text.js';

/**
 * Reports add up (issue 22 item 4): each report, regenerated in every format for one framework and
 * for all of them, prints the numbers /controls/status answers at the same moment: per framework the
 * score and the applicable, passing, failing, unknown and not-attested controls, the failing
 * controls themselves, the overall score and the active findings by severity. The workspace mixes
 * what used to be counted in one place and not the other: AWS findings from a Terraform discovery,
 * host-rule findings from an agent report (their controls were listed as failing yet missing from
 * the framework table and the score), and a bare bucket the rules cannot fully judge.
 */

const STATE = JSON.parse(readFileSync(projectPath('test', 'fixtures', 'terraform', 'discovery', 'terraform.tfstate'), 'utf8'));
const CJK_NAME = '数据湖-生产 Ελληνικά';
const CYRILLIC_NAME = 'Продакшн-база-данных';
const NIST = 'nist-800-53';

let t: TestApp;
let tenant: TenantFixture;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp({ clockStart: '2026-11-23T13:00:00.000Z' });
  tenant = await buildTenant(t, { name: 'Acme Numbers' });
  admin = tenant.admin;
  const nodes = [
    { ...fixtureNode('aws-rds-instance-backup-enabled', 'violating', 'db-cjk'), name: CJK_NAME },
    { ...fixtureNode('aws-rds-instance-backup-enabled', 'violating', 'db-cyrillic'), name: CYRILLIC_NAME },
    // Only a name: the rules that read settings it lacks cannot all judge it.
    {
      provider: 'aws',
      region: 'eu-west-1',
      type: 'aws.s3.bucket',
      native_id: 'bare-bucket',
      name: 'bare-bucket',
      account_id: '123456789012',
      properties: { configuration: { name: 'bare-bucket' } },
      tags: {},
    },
  ];
  for (const node of nodes) await call(t.app, admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/nodes`, payload: node, expect: 201 });
  await call(t.app, admin.token, {
    method: 'POST',
    url: `/api/v1/tenants/${tenant.id}/jobs`,
    payload: { name: 'shop', plugins: ['terraform-state'], config: { 'terraform-state': { state: STATE } }, start: true },
    expect: 201,
  });
  await t.drain();
  // A host that permits root login and empty passwords over SSH: host-rule findings.
  const key = (await createApiKey(t, tenant, { permissions: ['agents:write'] })).key;
  const report = buildReport({
    agent_id: 'agent-numbers',
    config_checks: [
      { id: 'sshd.permit_root_login', value: 'yes', source: '/etc/ssh/sshd_config:33' },
      { id: 'sshd.permit_empty_passwords', value: 'yes', source: '/etc/ssh/sshd_config:40' },
    ],
    local_users: [{ username: 'root', uid: 0, gid: 0, home: '/root', shell: '/bin/bash', last_login: null, password_status: 'empty' }],
  });
  const res = await sendReport(t, key, 'agent-numbers', report);
  expect(res.statusCode, res.body).toBe(200);
  // A second audit later: the first one's baseline is a point of the score history.
  t.clock.advance(3_600_000);
  admin = await fresh(t, admin);
  await audit(t, admin.token, tenant.id);
  t.clock.advance(60_000);
}, 300_000);
afterAll(() => t.close());

interface StatusBody {
  overall_score: number;
  total_findings: number;
  by_severity: Record<string, number>;
  by_framework: Record<
    string,
    { score: number; applicable_controls: number; passing_controls: number; failing_controls: number; unknown_controls: number; not_attested_controls: number }
  >;
  unknown: { controls: number; evaluations: number; resources: number };
}

async function status(framework: string | null): Promise<StatusBody> {
  return (await call(t.app, admin.token, { url: `/api/v1/tenants/${tenant.id}/controls/status${framework ? `?framework=${framework}` : ''}`, expect: 200 })).json();
}

/** Every control /controls/status lists in an automated state, paged through. */
async function controlsIn(framework: string | null, state: string): Promise<Set<string>> {
  const keys = new Set<string>();
  for (let page = 1; ; page++) {
    const body = (
      await call(t.app, admin.token, {
        url: `/api/v1/tenants/${tenant.id}/controls/status?automated_state=${state}&per_page=500&page=${page}${framework ? `&framework=${framework}` : ''}`,
        expect: 200,
      })
    ).json();
    for (const c of body.controls.items) keys.add(`${c.framework} ${c.control_id}`);
    if (page >= body.controls.total_pages) return keys;
  }
}

async function generate(format: string, framework: string | null): Promise<{ report: Record<string, any>; file: Buffer | string }> {
  const body = framework ? { format, framework } : { format };
  const queued = (await call(t.app, admin.token, { method: 'POST', url: `/api/v1/tenants/${tenant.id}/reports/generate`, payload: body, expect: 202 })).json();
  await t.drain();
  const done = (await call(t.app, admin.token, { url: queued.status_url, expect: 200 })).json();
  expect(done.status, done.error).toBe('succeeded');
  const file = await call(t.app, admin.token, { url: done.download_url, expect: 200 });
  return { report: done, file: format === 'pdf' ? file.rawPayload : file.body };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The numbers the PDF prints: framework table rows, the failing-controls heading and sub-headings, the controls listed. */
function pdfNumbers(pages: PdfPage[], frameworkNames: Record<string, string>) {
  const text = pages.map((p) => p.text).join('\n');
  // A row's first line: the framework's name (or as much of it as fits before the name wraps) and the numbers.
  const table: Record<string, number[]> = {};
  for (const row of text.matchAll(/^(.+?) (\d+)% (\d+) (\d+) (\d+) (\d+) (\d+)$/gm)) {
    const id = Object.entries({ ...frameworkNames, all: 'All frameworks' }).find(([, name]) => name === row[1] || name.startsWith(`${row[1]} `))?.[0];
    if (id) table[id] = row.slice(2).map(Number);
  }
  const heading = Number(text.match(/^Failing controls: (\d+)$/m)?.[1]);
  const perFramework: Record<string, number> = {};
  for (const [id, name] of Object.entries(frameworkNames)) {
    const sub = text.match(new RegExp(`^${escape(name)}: (\\d+) failing controls?$`, 'm'));
    perFramework[id] = sub ? Number(sub[1]) : 0;
  }
  const findings = Number(text.match(/^Active findings: (\d+)$/m)?.[1]);
  return { text, table, heading, perFramework, findings };
}

describe.each([
  ['NIST SP 800-53 only', NIST],
  ['all frameworks', null],
])('reports of %s', (_label, framework) => {
  it('print the numbers of /controls/status in JSON, PDF and CSV', async () => {
    admin = await fresh(t, admin);
    const json = JSON.parse((await generate('json', framework)).file as string) as { report: Record<string, any>; findings: unknown[] };
    const pdf = await pdfPages((await generate('pdf', framework)).file as Buffer);
    const csv = ((await generate('csv', framework)).file as string).trimEnd().split('\r\n');
    const expected = await status(framework);
    const failing = await controlsIn(framework, 'failing');
    const unknown = await controlsIn(framework, 'unknown');
    const summary = json.report;

    // Every active finding's own control is failing in /controls/status, host rules' included.
    const findings = (
      await call(t.app, admin.token, { url: `/api/v1/tenants/${tenant.id}/findings?per_page=500${framework ? `&framework=${framework}` : ''}`, expect: 200 })
    ).json();
    const hostFindings = findings.items.filter((f: { rule_id: string }) => f.rule_id.startsWith('host-'));
    expect(hostFindings.length).toBeGreaterThan(0);
    for (const f of findings.items as Array<{ framework: string; control_id: string }>) {
      if (framework === null || f.framework === framework) expect(failing, `${f.framework} ${f.control_id}`).toContain(`${f.framework} ${f.control_id}`);
    }

    // The PDF: framework table, the heading and its per-framework sub-headings add up, every failing control listed.
    const names = Object.fromEntries(summary.frameworks.map((f: { id: string; name: string }) => [f.id, f.name]));
    const printed = pdfNumbers(pdf, names);
    const failingSum = Object.values(expected.by_framework).reduce((n, f) => n + f.failing_controls, 0);
    expect(printed.heading).toBe(failingSum);
    expect(printed.heading).toBe(failing.size);
    for (const [id, counts] of Object.entries(expected.by_framework)) {
      expect(printed.table[id], id).toEqual([
        counts.score,
        counts.applicable_controls,
        counts.passing_controls,
        counts.failing_controls,
        counts.unknown_controls,
        counts.not_attested_controls,
      ]);
      expect(printed.perFramework[id], id).toBe(counts.failing_controls);
    }
    if (framework === null) {
      const sum = (k: keyof StatusBody['by_framework'][string]) => Object.values(expected.by_framework).reduce((n, f) => n + f[k], 0);
      expect(printed.table.all).toEqual([
        expected.overall_score,
        sum('applicable_controls'),
        sum('passing_controls'),
        sum('failing_controls'),
        sum('unknown_controls'),
        sum('not_attested_controls'),
      ]);
    }
    const controlColumn = new Set(pdf.flatMap((p) => p.lines.map((l) => l.split(' ')[0]!)));
    for (const key of failing) expect(controlColumn, key).toContain(key.split(' ')[1]);
    expect(printed.findings).toBe(expected.total_findings);
    for (const [severity, n] of Object.entries(expected.by_severity)) expect(printed.text).toMatch(new RegExp(`(^| )${severity} ${n}( |$)`, 'm'));
    expect(printed.text).toContain(CJK_NAME);
    expect(printed.text).toContain(CYRILLIC_NAME);
    pdf.forEach((page, i) => expect(page.lines.at(-1)).toMatch(new RegExp(`Page ${i + 1} of ${pdf.length}$`)));

    // JSON: the same numbers, the same failing and unknown controls.
    expect(summary.overall_score).toBe(expected.overall_score);
    expect(summary.findings_by_severity).toEqual(expected.by_severity);
    expect(summary.total_findings).toBe(expected.total_findings);
    expect(json.findings).toHaveLength(expected.total_findings);
    for (const f of summary.frameworks) {
      const { score, applicable_controls, passing_controls, failing_controls, unknown_controls, not_attested_controls } = expected.by_framework[f.id]!;
      expect(f).toEqual({ id: f.id, name: f.name, score, applicable_controls, passing_controls, failing_controls, unknown_controls, not_attested_controls });
    }
    expect(new Set(summary.failing_controls.map((c: { framework: string; control_id: string }) => `${c.framework} ${c.control_id}`))).toEqual(failing);
    expect(new Set(summary.unknown_controls.map((c: { framework: string; control_id: string }) => `${c.framework} ${c.control_id}`))).toEqual(unknown);
    expect(summary.method.not_evaluated.unknown_controls).toBe(expected.unknown.controls);
    if (framework === null) expect(summary.method.not_evaluated.unknown_evaluations).toBe(expected.unknown.evaluations);
    expect(summary.score_history.length).toBeGreaterThanOrEqual(2);
    expect(summary.score_history.at(-1).overall).toBe(expected.overall_score);
    expect(summary.method.rules.host).toBeGreaterThan(0);

    // CSV: one row per active finding.
    expect(csv).toHaveLength(expected.total_findings + 1);
  }, 300_000);
});
