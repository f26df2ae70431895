import { createRequire } from 'node:module';
import type PDFKitDocument from 'pdfkit';
import type { Readable } from 'node:stream';
import type { ReportContent } from './report-data.js';

const require = createRequire(import.meta.url);
let pdfKit: typeof PDFKitDocument | null = null;
/** pdfkit takes about 0.15 s to load: only a process that renders a PDF report pays for it. */
function loadPdfKit(): typeof PDFKitDocument {
  pdfKit ??= require('pdfkit') as typeof PDFKitDocument;
  return pdfKit;
}

/** The PDF lists at most this many findings; the JSON and CSV reports always hold all of them. */
export const PDF_MAX_FINDINGS = 2_000;
const PDF_MAX_CONTROLS = 60;

const SEVERITY_COLOUR: Record<string, string> = { CRITICAL: '#b3123a', HIGH: '#e4572e', MEDIUM: '#c98a0c', LOW: '#2f7ec9', INFO: '#78909c' };
const INK = '#1b1f24';
const MUTED = '#5a6472';
const RULE = '#d5dae1';

interface Column {
  title: string;
  width: number;
  align?: 'left' | 'right';
}

/**
 * The report as a PDF (A4): summary, framework scores, findings by severity, failing controls and
 * the findings themselves, most severe first. pdfkit emits each page when it is finished, and the
 * findings are read a page at a time, so memory stays bounded whatever the workspace's size.
 */
export function pdfReport(content: ReportContent): { stream: Readable; done: Promise<void> } {
  const { summary } = content;
  const PDFDocument = loadPdfKit();
  const doc = new PDFDocument({
    size: 'A4',
    margin: 48,
    info: { Title: summary.title, Author: 'ControlGraph', Subject: `${summary.tenant.name} / ${summary.workspace.name}`, CreationDate: new Date(summary.generated_at) },
  });
  const left = doc.page.margins.left;
  const width = doc.page.width - doc.page.margins.left - doc.page.margins.right;
  const bottom = () => doc.page.height - doc.page.margins.bottom;

  /** The text cut (with an ellipsis) to `width` in the current font: a cell never runs into the next. */
  const fit = (text: string, width: number): string => {
    const clean = text.replace(/\s+/g, ' ');
    if (doc.widthOfString(clean) <= width) return clean;
    let lo = 0;
    let hi = clean.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (doc.widthOfString(`${clean.slice(0, mid)}…`) <= width) lo = mid;
      else hi = mid - 1;
    }
    return `${clean.slice(0, lo)}…`;
  };

  const heading = (text: string) => {
    if (doc.y > bottom() - 80) doc.addPage();
    doc.moveDown(0.8).font('Helvetica-Bold').fontSize(13).fillColor(INK).text(text, left, doc.y);
    doc.moveDown(0.3);
  };

  /** Rows of a table; `continued` appends to the table above (its header is repeated only on a new page). */
  const table = (columns: Column[], rows: Array<Array<{ text: string; colour?: string; bold?: boolean }>>, continued = false) => {
    const header = () => {
      let x = left;
      const y = doc.y;
      doc.font('Helvetica-Bold').fontSize(8.5).fillColor(MUTED);
      for (const c of columns) {
        const dx = c.align === 'right' ? c.width - 2 - doc.widthOfString(c.title) : 2;
        doc.text(c.title, x + dx, y, { lineBreak: false });
        x += c.width;
      }
      doc.moveTo(left, y + 12).lineTo(left + width, y + 12).strokeColor(RULE).lineWidth(0.8).stroke();
      doc.y = y + 16;
    };
    if (!continued) header();
    for (const row of rows) {
      if (doc.y > bottom() - 14) {
        doc.addPage();
        header();
      }
      let x = left;
      const y = doc.y;
      row.forEach((cell, i) => {
        const c = columns[i]!;
        doc.font(cell.bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(8.5).fillColor(cell.colour ?? INK);
        // One line per row: long values end in an ellipsis instead of wrapping into the next row.
        const text = fit(cell.text, c.width - 4);
        const dx = c.align === 'right' ? c.width - 2 - doc.widthOfString(text) : 2;
        doc.text(text, x + dx, y, { lineBreak: false });
        x += c.width;
      });
      doc.y = y + 13;
    }
  };

  const done = (async () => {
    doc.font('Helvetica-Bold').fontSize(20).fillColor(INK).text(summary.title, left, doc.y);
    doc.moveDown(0.3).font('Helvetica').fontSize(10).fillColor(MUTED);
    doc.text(`Tenant ${summary.tenant.name} · workspace ${summary.workspace.name}`);
    doc.text(summary.scope.asset_group ? `Scope: asset group ${summary.scope.asset_group.name} (${summary.scope.resources} resources)` : `Scope: the whole workspace (${summary.scope.resources} resources)`);
    doc.text(`Generated ${summary.generated_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}`);

    doc.moveDown(1).font('Helvetica-Bold').fontSize(28).fillColor(INK).text(`${summary.overall_score}%`, { continued: true });
    doc.font('Helvetica').fontSize(11).fillColor(MUTED).text('  overall compliance score (passing automated and attested controls / applicable controls)');

    heading('Frameworks');
    table(
      [
        { title: 'Framework', width: width * 0.44 },
        { title: 'Score', width: width * 0.14, align: 'right' },
        { title: 'Passing', width: width * 0.14, align: 'right' },
        { title: 'Failing', width: width * 0.14, align: 'right' },
        { title: 'Applicable', width: width * 0.14, align: 'right' },
      ],
      summary.frameworks.map((f) => [
        { text: f.name, bold: true },
        { text: `${f.score}%` },
        { text: String(f.passing_controls) },
        { text: String(f.failing_controls), colour: f.failing_controls ? SEVERITY_COLOUR.HIGH : INK },
        { text: String(f.applicable_controls) },
      ]),
    );

    heading(`Active findings: ${summary.total_findings}`);
    let x = left;
    const y = doc.y;
    for (const [severity, n] of Object.entries(summary.findings_by_severity)) {
      doc.roundedRect(x, y, 90, 34, 4).fillColor(SEVERITY_COLOUR[severity] ?? MUTED).fill();
      doc.font('Helvetica-Bold').fontSize(14).fillColor('#ffffff').text(String(n), x, y + 4, { width: 90, align: 'center' });
      doc.font('Helvetica').fontSize(7.5).text(severity, x, y + 21, { width: 90, align: 'center' });
      x += 98;
    }
    doc.y = y + 42;

    heading(`Failing controls: ${summary.failing_controls.length}`);
    if (summary.failing_controls.length === 0) doc.font('Helvetica').fontSize(9).fillColor(MUTED).text('No control fails.');
    else {
      table(
        [
          { title: 'Framework', width: width * 0.16 },
          { title: 'Control', width: width * 0.14 },
          { title: 'Title', width: width * 0.44 },
          { title: 'Findings', width: width * 0.11, align: 'right' },
          { title: 'Worst', width: width * 0.15 },
        ],
        summary.failing_controls.slice(0, PDF_MAX_CONTROLS).map((c) => [
          { text: c.framework },
          { text: c.control_id, bold: true },
          { text: c.title ?? '' },
          { text: String(c.findings) },
          { text: c.top_severity, colour: SEVERITY_COLOUR[c.top_severity], bold: true },
        ]),
      );
      if (summary.failing_controls.length > PDF_MAX_CONTROLS) {
        doc.font('Helvetica').fontSize(8.5).fillColor(MUTED).text(`… and ${summary.failing_controls.length - PDF_MAX_CONTROLS} more (see the JSON report).`, left);
      }
    }

    heading('Findings');
    const columns: Column[] = [
      { title: 'Severity', width: width * 0.11 },
      { title: 'Finding', width: width * 0.39 },
      { title: 'Resource', width: width * 0.34 },
      { title: 'Control', width: width * 0.16 },
    ];
    let written = 0;
    for await (const page of content.findings()) {
      const rows = page.slice(0, PDF_MAX_FINDINGS - written).map((f) => [
        { text: f.severity, colour: SEVERITY_COLOUR[f.severity], bold: true },
        { text: f.title },
        { text: `${f.resource_name || f.resource_id} (${f.resource_type})` },
        { text: `${f.framework} ${f.control_id}` },
      ]);
      table(columns, rows, written > 0);
      written += rows.length;
      if (written >= PDF_MAX_FINDINGS) break;
    }
    if (summary.total_findings === 0) doc.font('Helvetica').fontSize(9).fillColor(MUTED).text('No active findings.', left);
    else if (summary.total_findings > written) {
      doc.moveDown(0.5).font('Helvetica').fontSize(9).fillColor(MUTED).text(`The ${summary.total_findings - written} less severe findings are in the JSON and CSV reports.`, left);
    }
    doc.end();
  })();
  // A failure while writing ends the stream with it.
  done.catch((error: unknown) => doc.destroy(error instanceof Error ? error : new Error(String(error))));
  return { stream: doc as unknown as Readable, done };
}
