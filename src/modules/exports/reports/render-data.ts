import { Readable } from 'node:stream';
import type { ReportContent, ReportFinding } from './report-data.js';

/** The findings columns of the CSV report, in order. */
export const CSV_COLUMNS: Array<keyof ReportFinding> = [
  'id',
  'severity',
  'title',
  'rule_id',
  'framework',
  'control_id',
  'resource_id',
  'resource_type',
  'resource_name',
  'region',
  'account_id',
  'first_seen',
  'last_seen',
  'remediation',
];

/**
 * One CSV field (RFC 4180). A value that a spreadsheet would run as a formula (=, +, -, @, tab, CR
 * at the start) is prefixed with an apostrophe: finding titles and resource names come from the
 * inventory and must not execute when the report is opened.
 */
export function csvField(value: unknown): string {
  let text = value instanceof Date ? value.toISOString() : String(value ?? '');
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The findings as CSV (one row per active finding, most severe first), produced page by page. */
export function csvReport(content: ReportContent): Readable {
  return Readable.from(
    (async function* () {
      yield `${CSV_COLUMNS.join(',')}\r\n`;
      for await (const page of content.findings()) yield page.map((f) => CSV_COLUMNS.map((c) => csvField(f[c])).join(',') + '\r\n').join('');
    })(),
  );
}

/** The report as one JSON document `{report, findings}`, the findings array written page by page. */
export function jsonReport(content: ReportContent): Readable {
  return Readable.from(
    (async function* () {
      yield `{"report":${JSON.stringify(content.summary)},"findings":[`;
      let first = true;
      for await (const page of content.findings()) {
        const text = page.map((f) => JSON.stringify(f)).join(',');
        yield first ? text : `,${text}`;
        first = false;
      }
      yield ']}\n';
    })(),
  );
}
