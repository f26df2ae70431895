import { createRequire } from 'node:module';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type PDFKitDocument from 'pdfkit';
import type { Readable } from 'node:stream';
import type { ReportContent, ReportSummary } from './report-data.js';
import { lookupTable } from '../../../platform/lookup-table.js';
import { barChart, lineChart } from './pdf-charts.js';
import { INK, MUTED, PdfLayout, RULE, type Cell, type Column } from './pdf-layout.js';

const require = createRequire(import.meta.url);
let pdfKit: typeof PDFKitDocument | null = null;
/** pdfkit takes about 0.15 s to load: only a process that renders a PDF report pays for it. */
function loadPdfKit(): typeof PDFKitDocument {
  pdfKit ??= require('pdfkit') as typeof PDFKitDocument;
  return pdfKit;
}

/** The PDF lists at most this many findings (most severe first); the JSON and CSV reports always hold all of them. */
export const PDF_MAX_FINDINGS = 2_000;

const SEVERITY_COLOUR: Record<string, string> = lookupTable({ CRITICAL: '#b3123a', HIGH: '#e4572e', MEDIUM: '#c98a0c', LOW: '#2f7ec9', INFO: '#78909c' });
const SERIES_COLOURS = ['#1f5fa8', '#2a9d8f', '#c98a0c', '#8e44ad', '#b3123a', '#5a6472'];
/** Framework names short enough for a chart's label column. */
const SHORT_NAMES: Record<string, string> = lookupTable({ 'nist-800-53': 'NIST SP 800-53', 'cis-aws': 'CIS AWS Foundations', 'pci-dss': 'PCI DSS', soc2: 'SOC 2' });
const shortName = (f: { id: string; name: string }) => SHORT_NAMES[f.id] ?? f.name;
const scoreColour = (score: number) => (score >= 80 ? '#2a9d8f' : score >= 50 ? '#c98a0c' : '#b3123a');
const when = (iso: string | null) =>
  iso
    ? iso
        .replace('T', ' ')
        .replace(/(:\d\d)\.\d+Z$/, '$1 UTC')
        .replace(/Z$/, ' UTC')
    : 'never';
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/**
 * The report as a PDF (A4) an auditor can file: summary with charts, method, every failing and
 * unknown control, the findings with their resource ids and remediation, the rules, and a sign-off
 * block; page numbers on every page. Its numbers are the summary's, which are /controls/status's.
 * Pages are buffered until the end (for "Page n of N"): at most PDF_MAX_FINDINGS findings are set,
 * so the document stays bounded whatever the workspace's size.
 */
export function pdfReport(content: ReportContent): { stream: Readable; done: Promise<void> } {
  const { summary } = content;
  const PDFDocument = loadPdfKit();
  const doc = new PDFDocument({
    size: 'A4',
    margins: { top: 48, bottom: 58, left: 48, right: 48 },
    bufferPages: true,
    lang: 'en',
    displayTitle: true,
    info: { Title: summary.title, Author: 'ControlGraph', Subject: `${summary.tenant.name} / ${summary.workspace.name}`, CreationDate: new Date(summary.generated_at) },
  });
  const done = (async () => {
    const page = new PdfLayout(doc);
    titleBlock(page, summary);
    summarySection(page, summary);
    methodSection(page, summary);
    await failingControlsSection(page, summary);
    unknownControlsSection(page, summary);
    await findingsSection(page, content);
    await rulesSection(page, summary);
    signOffSection(page, summary);
    page.footers(`${summary.title} · ${summary.tenant.name} / ${summary.workspace.name} · generated ${when(summary.generated_at)}`);
    doc.end();
  })();
  // A failure while writing ends the stream with it.
  done.catch((error: unknown) => doc.destroy(error instanceof Error ? error : new Error(String(error))));
  return { stream: doc as unknown as Readable, done };
}

/** Rows set between two turns of the event loop: a long table never holds the API's thread for long. */
const ROWS_PER_TURN = 40;

/** A table set in batches of ROWS_PER_TURN rows, yielding to the event loop between them. */
async function tableInTurns(page: PdfLayout, columns: Column[], rows: Cell[][], continued = false): Promise<void> {
  for (let i = 0; i < rows.length || (i === 0 && !continued); i += ROWS_PER_TURN) {
    page.table(columns, rows.slice(i, i + ROWS_PER_TURN), continued || i > 0);
    await nextTurn();
  }
}

function titleBlock(page: PdfLayout, s: ReportSummary): void {
  page.paragraph(s.title, { face: 'bold', size: 20, color: INK });
  page.keyValues(
    [
      ['Tenant', s.tenant.name],
      ['Workspace', s.workspace.name],
      [
        'Scope',
        s.scope.asset_group
          ? `Asset group ${s.scope.asset_group.name} (${plural(s.scope.resources, 'resource')})`
          : `The whole workspace (${plural(s.scope.resources, 'resource')})`,
      ],
      ['Generated', when(s.generated_at)],
      ...(s.report_id ? ([['Report id', s.report_id]] as Array<[string, string]>) : []),
    ],
    0.18,
  );
  page.space(8);
  const totals = s.frameworks.reduce(
    (t, f) => ({
      applicable: t.applicable + f.applicable_controls,
      passing: t.passing + f.passing_controls,
      failing: t.failing + f.failing_controls,
      unknown: t.unknown + f.unknown_controls,
      notAttested: t.notAttested + f.not_attested_controls,
    }),
    { applicable: 0, passing: 0, failing: 0, unknown: 0, notAttested: 0 },
  );
  page.ensure(50);
  const score = `${s.overall_score}%`;
  page.text.draw(score, page.left, page.y, { face: 'bold', size: 30, color: scoreColour(s.overall_score) });
  const x = page.left + page.text.width(score, { face: 'bold', size: 30 }) + 12;
  page.text.draw(`overall compliance score${s.frameworks.length === 1 ? ` (${s.frameworks[0]!.name})` : ''}`, x, page.y + 6, { face: 'bold', size: 10, color: INK });
  page.text.draw(
    `${plural(totals.applicable, 'applicable control')}: ${totals.passing} passing, ${totals.failing} failing, ${totals.unknown} unknown, ${totals.notAttested} not attested · ${plural(s.total_findings, 'active finding')}`,
    x,
    page.y + 21,
    { size: 8.5, color: MUTED },
  );
  page.space(46);
}

function summarySection(page: PdfLayout, s: ReportSummary): void {
  page.heading('Summary');
  const rows: Cell[][] = s.frameworks.map((f) => [
    { text: f.name, face: 'bold' },
    { text: `${f.score}%`, face: 'bold', color: scoreColour(f.score) },
    { text: String(f.applicable_controls) },
    { text: String(f.passing_controls) },
    { text: String(f.failing_controls), color: f.failing_controls ? SEVERITY_COLOUR.HIGH : INK, face: f.failing_controls ? 'bold' : 'regular' },
    { text: String(f.unknown_controls) },
    { text: String(f.not_attested_controls) },
  ]);
  if (s.frameworks.length > 1) {
    const sum = (k: 'applicable_controls' | 'passing_controls' | 'failing_controls' | 'unknown_controls' | 'not_attested_controls') =>
      String(s.frameworks.reduce((n, f) => n + f[k], 0));
    rows.push([
      { text: 'All frameworks', face: 'bold' },
      { text: `${s.overall_score}%`, face: 'bold' },
      { text: sum('applicable_controls'), face: 'bold' },
      { text: sum('passing_controls'), face: 'bold' },
      { text: sum('failing_controls'), face: 'bold' },
      { text: sum('unknown_controls'), face: 'bold' },
      { text: sum('not_attested_controls'), face: 'bold' },
    ]);
  }
  page.table(
    [
      { title: 'Framework', share: 0.33 },
      { title: 'Score', share: 0.09, align: 'right' },
      { title: 'Applicable', share: 0.12, align: 'right' },
      { title: 'Passing', share: 0.11, align: 'right' },
      { title: 'Failing', share: 0.1, align: 'right' },
      { title: 'Unknown', share: 0.11, align: 'right' },
      { title: 'Not attested', share: 0.14, align: 'right' },
    ],
    rows,
  );
  page.space(4);
  page.paragraph('Passing, failing, unknown and not attested controls add up to the applicable controls of each framework; the Method section defines each.', {
    size: 7.5,
    color: MUTED,
  });

  // Charts: score per framework and findings by severity side by side, the history below.
  const rowsShown = Math.max(s.frameworks.length, Object.keys(s.findings_by_severity).length);
  const chartHeight = 24 + rowsShown * 18;
  page.ensure(chartHeight + 12);
  const half = (page.width - 24) / 2;
  barChart(
    page.doc,
    page.text,
    { x: page.left, y: page.y + 6, width: half, height: chartHeight },
    'Score per framework',
    s.frameworks.map((f) => ({ label: shortName(f), value: f.score, valueLabel: `${f.score}%`, color: scoreColour(f.score) })),
    { max: 100, labelShare: 0.4 },
  );
  barChart(
    page.doc,
    page.text,
    { x: page.left + half + 24, y: page.y + 6, width: half, height: chartHeight },
    `Active findings by severity (${s.total_findings})`,
    Object.entries(s.findings_by_severity).map(([severity, n]) => ({ label: severity, value: n, color: SEVERITY_COLOUR[severity] ?? MUTED })),
  );
  page.space(chartHeight + 14);

  if (s.score_history.length >= 2) {
    page.ensure(170);
    const series =
      s.frameworks.length === 1
        ? [{ name: `${shortName(s.frameworks[0]!)} score`, color: SERIES_COLOURS[0]!, points: s.score_history.map((p) => ({ at: new Date(p.at), value: p.overall })) }]
        : [
            { name: 'Overall', color: INK, points: s.score_history.map((p) => ({ at: new Date(p.at), value: p.overall })) },
            ...s.frameworks.map((f, i) => ({
              name: shortName(f),
              color: SERIES_COLOURS[i % SERIES_COLOURS.length]!,
              points: s.score_history.filter((p) => p.frameworks[f.id] !== undefined).map((p) => ({ at: new Date(p.at), value: p.frameworks[f.id]! })),
            })),
          ];
    lineChart(
      page.doc,
      page.text,
      { x: page.left, y: page.y + 4, width: page.width, height: 160 },
      `Score history (${plural(s.score_history.length - 1, 'audit run')}, then now)`,
      series,
    );
    page.space(168);
  } else {
    page.paragraph(
      s.scope.asset_group
        ? 'Score history: scores are recorded per workspace, so a report of one asset group has none.'
        : 'Score history: none yet. Each audit run records the score it starts from; the chart appears after the first audit run.',
      { size: 8.5, color: MUTED },
    );
  }
}

function methodSection(page: PdfLayout, s: ReportSummary): void {
  const m = s.method;
  page.heading('Method');
  const types = m.resources.by_type.slice(0, 8).map((t) => `${t.type} ${t.count}`);
  const moreTypes = m.resources.by_type.length - types.length;
  const audit = m.last_audit;
  const ne = m.not_evaluated;
  page.keyValues([
    ['Frameworks', s.frameworks.map((f) => f.name).join(', ') || 'none enabled'],
    [
      'What was evaluated',
      `${s.scope.asset_group ? `The ${plural(m.resources.total, 'resource')} of asset group ${s.scope.asset_group.name}` : `Every resource of the workspace: ${plural(m.resources.total, 'resource')}`}` +
        (types.length ? ` (${types.join(', ')}${moreTypes > 0 ? `, and ${plural(moreTypes, 'other type')}` : ''})` : '') +
        `; ${m.hosts.count ? `${plural(m.hosts.count, 'host')} reporting through the agent` : 'no host reports through the agent'}.`,
    ],
    [
      'When',
      `${audit ? `Last audit run ${audit.id}, started ${when(audit.started_at)}, finished ${when(audit.finished_at)}${audit.resources_evaluated !== null ? `: ${plural(audit.rules_evaluated ?? 0, 'rule')} over ${plural(audit.resources_evaluated, 'resource')}` : ''}` : 'No audit run has finished'}. ` +
        `${m.hosts.count ? `Host reports scanned from ${when(m.hosts.first_report_at)} to ${when(m.hosts.last_report_at)}. ` : ''}` +
        `Findings and control states as of ${when(s.generated_at)}.`,
    ],
    [
      'By which rules',
      `${plural(m.rules.builtin, 'built-in AWS rule')}, ${plural(m.rules.host, 'host rule')} (configuration, vulnerable packages, configuration drift) and ${plural(m.rules.custom, 'custom rule')} map to the selected frameworks; each is listed with its controls in "Rules" below.`,
    ],
    [
      'What could not be evaluated',
      `${plural(ne.unknown_evaluations, 'evaluation')} of ${plural(ne.unknown_resources, 'resource')} had no outcome, leaving ${plural(ne.unknown_controls, 'control')} unknown` +
        `${ne.suspended_rules.length ? `; ${plural(ne.suspended_rules.length, 'rule')} suspended for exceeding the evaluation budget (${ne.suspended_rules.map((r) => r.rule_id).join(', ')})` : '; no rule was suspended'}` +
        `; ${plural(ne.not_attested_controls, 'control')} no rule checks await an attestation.`,
    ],
  ]);
  page.heading('Definitions', 2);
  page.keyValues([
    ['Active finding', m.definitions.active_finding],
    ['Failing control', m.definitions.failing],
    ['Unknown control', m.definitions.unknown],
    ['Passing control', m.definitions.passing],
    ['Not attested', m.definitions.not_attested],
    ['Score', m.definitions.score],
  ]);
  if (ne.by_rule.length) {
    page.heading('Evaluations without an outcome', 2);
    page.table(
      [
        { title: 'Rule', share: 0.3 },
        { title: 'Reason', share: 0.18 },
        { title: 'Resources', share: 0.1, align: 'right' },
        { title: 'Missing configuration', share: 0.42 },
      ],
      ne.by_rule.map((r) => [{ text: r.rule_id }, { text: r.reason.replace(/_/g, ' ') }, { text: String(r.resources) }, { text: r.missing_paths.join(', '), color: MUTED }]),
    );
  }
}

async function failingControlsSection(page: PdfLayout, s: ReportSummary): Promise<void> {
  page.heading(`Failing controls: ${s.failing_controls.length}`);
  if (s.failing_controls.length === 0) {
    page.paragraph('No control fails.', { size: 9, color: MUTED });
    return;
  }
  page.paragraph('Every failing control of each framework, worst first: the highest severity of its active findings, then their number.', { size: 8.5, color: MUTED });
  for (const f of s.frameworks) {
    const controls = s.failing_controls.filter((c) => c.framework === f.id);
    if (controls.length === 0) continue;
    page.heading(`${f.name}: ${plural(controls.length, 'failing control')}`, 2);
    await tableInTurns(
      page,
      [
        { title: 'Control', share: 0.13 },
        { title: 'Title', share: 0.6 },
        { title: 'Findings', share: 0.11, align: 'right' },
        { title: 'Worst', share: 0.16 },
      ],
      controls.map((c) => [
        { text: c.control_id, face: 'bold' },
        { text: c.title ?? '' },
        { text: String(c.findings) },
        { text: c.top_severity, face: 'bold', color: SEVERITY_COLOUR[c.top_severity] },
      ]),
    );
  }
}

function unknownControlsSection(page: PdfLayout, s: ReportSummary): void {
  if (s.unknown_controls.length === 0) return;
  page.heading(`Unknown controls: ${s.unknown_controls.length}`);
  page.paragraph('No active finding maps to these controls, but a rule could not judge at least one of their resources: they do not pass.', { size: 8.5, color: MUTED });
  page.table(
    [
      { title: 'Framework', share: 0.16 },
      { title: 'Control', share: 0.13 },
      { title: 'Title', share: 0.55 },
      { title: 'Evaluations', share: 0.16, align: 'right' },
    ],
    s.unknown_controls.map((c) => [{ text: c.framework }, { text: c.control_id, face: 'bold' }, { text: c.title ?? '' }, { text: String(c.evaluations) }]),
  );
}

async function findingsSection(page: PdfLayout, content: ReportContent): Promise<void> {
  const { summary } = content;
  page.heading(`Active findings: ${summary.total_findings}`);
  if (summary.total_findings === 0) {
    page.paragraph('No active findings.', { size: 9, color: MUTED });
    return;
  }
  page.paragraph(
    `Most severe first${summary.total_findings > PDF_MAX_FINDINGS ? `; the first ${PDF_MAX_FINDINGS.toLocaleString('en')} are listed here, all of them in the JSON and CSV reports` : ''}. Each with the resource it concerns and the remediation.`,
    { size: 8.5, color: MUTED },
  );
  const columns: Column[] = [
    { title: 'Severity', share: 0.1 },
    { title: 'Finding and remediation', share: 0.42 },
    { title: 'Resource', share: 0.34 },
    { title: 'Control', share: 0.14 },
  ];
  let written = 0;
  for await (const batch of content.findings()) {
    const rows: Cell[][] = batch.slice(0, PDF_MAX_FINDINGS - written).map((f) => [
      { text: f.severity, face: 'bold', color: SEVERITY_COLOUR[f.severity] },
      [
        { text: f.title, face: 'bold', maxLines: 4 },
        { text: f.remediation ? `Remediation: ${f.remediation}` : '', size: 7.5, color: MUTED, maxLines: 5 },
      ],
      [
        { text: f.resource_name || f.resource_id, maxLines: 4 },
        { text: f.resource_id, size: 7, color: MUTED, maxLines: 6 },
        { text: [f.resource_type, f.region, f.account_id].filter(Boolean).join(' · '), size: 7, color: MUTED, maxLines: 2 },
      ],
      [
        { text: f.control_id, face: 'bold' },
        { text: f.framework, size: 7, color: MUTED },
      ],
    ]);
    await tableInTurns(page, columns, rows, written > 0);
    written += rows.length;
    if (written >= PDF_MAX_FINDINGS) break;
  }
  if (summary.total_findings > written) {
    page.space(4);
    page.paragraph(`The ${(summary.total_findings - written).toLocaleString('en')} less severe findings are in the JSON and CSV reports.`, { size: 9, color: MUTED });
  }
}

async function rulesSection(page: PdfLayout, s: ReportSummary): Promise<void> {
  const rules = s.method.rules.list;
  page.heading(`Rules: ${rules.length}`);
  page.paragraph('Every rule whose outcome counts for the selected frameworks, with the controls a failure of it fails.', { size: 8.5, color: MUTED });
  // Controls grouped by framework ("pci-dss: 1.2.5, 1.3.1"), one paragraph per framework, never cut.
  const byFramework = (controls: string[]): Cell => {
    if (s.frameworks.length === 1) return { text: controls.join(', '), color: MUTED, maxLines: 40 };
    const groups = new Map<string, string[]>();
    for (const c of controls) {
      const [framework, ...id] = c.split(' ');
      groups.set(framework!, [...(groups.get(framework!) ?? []), id.join(' ')]);
    }
    return [...groups].map(([framework, ids]) => ({ text: `${framework}: ${ids.join(', ')}`, color: MUTED, size: 7.5, maxLines: 40 }));
  };
  await tableInTurns(
    page,
    [
      { title: 'Rule', share: 0.24 },
      { title: 'Check', share: 0.3 },
      { title: 'Source', share: 0.08 },
      { title: 'Severity', share: 0.1 },
      { title: 'Controls', share: 0.28 },
    ],
    rules.map((r) => [{ text: r.id }, { text: r.title }, { text: r.source }, { text: r.severity, color: SEVERITY_COLOUR[r.severity] }, byFramework(r.controls)]),
  );
}

function signOffSection(page: PdfLayout, s: ReportSummary): void {
  page.heading('Sign-off', 1, 300);
  page.paragraph(
    `ControlGraph generated this report automatically on ${when(s.generated_at)}${s.report_id ? ` (report ${s.report_id})` : ''} from the inventory and findings of workspace ${s.workspace.name} of tenant ${s.tenant.name}. Its figures are those GET /controls/status answered at that moment. The reviewer confirms the scope and method above and accepts the findings as the state of the assessed systems on that date.`,
    { size: 9, color: INK },
  );
  page.space(6);
  for (const role of ['Prepared by', 'Reviewed by', 'Approved by']) {
    const height = 112;
    page.ensure(height + 10);
    const top = page.y;
    page.doc.rect(page.left, top, page.width, height).lineWidth(0.6).strokeColor(RULE).stroke();
    page.text.draw(role, page.left + 8, top + 7, { face: 'bold', size: 9.5, color: INK });
    // Two rows of two fields: a value (filled in for the automated preparer) on a line, its label under it.
    const filled: Record<string, string> = role === 'Prepared by' ? { Name: 'ControlGraph (automated report generation)', Date: when(s.generated_at) } : {};
    const columnWidth = (page.width - 16) / 2;
    ['Name', 'Role', 'Signature', 'Date'].forEach((field, i) => {
      const x = page.left + 8 + (i % 2) * columnWidth;
      const line = top + 46 + Math.floor(i / 2) * 44;
      if (filled[field]) page.text.draw(page.text.fit(filled[field], columnWidth - 20, { size: 9 }), x, line - 13, { size: 9, color: INK });
      page.doc
        .moveTo(x, line)
        .lineTo(x + columnWidth - 16, line)
        .lineWidth(0.5)
        .strokeColor(MUTED)
        .stroke();
      page.text.draw(field, x, line + 2, { size: 7.5, color: MUTED });
    });
    page.y = top + height + 10;
  }
}
