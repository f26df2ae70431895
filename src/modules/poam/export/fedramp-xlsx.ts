import { readFileSync } from 'node:fs';
import { projectPath } from '../../../platform/paths.js';
import { deflatedEntry, entryData, readZip, writeZip, type ZipEntry } from './zip.js';
import { commentLog, detectionDate, detectorSource, milestoneChanges, plannedMilestones, riskRating, statusDate, type ExportData, type ExportItem } from './collect.js';

/**
 * The FedRAMP POA&M workbook: the official template (content/poam/FedRAMP-POAM-Template.xlsx, see
 * its SOURCES.md) filled in place, so sheets, header rows, column headers, validations, conditional
 * formats and the record of changes are FedRAMP's own, byte for byte.
 *
 * Why not a spreadsheet library: the template's open sheet is 4,022 formatted rows with 44,000 cell
 * validations, and a full parse and re-write with exceljs takes 5-15 s of CPU per request. The
 * workbook is a ZIP of XML parts, so the template is read once per process and each export rewrites
 * only the rows it fills (inline strings, so the shared-string table stays as it is), adds two cell
 * styles (wrapped text, date) and drops the calculation chain, which Excel rebuilds. Tens of ms.
 *
 * Template layout (version 2.1, 2024-03-29), the same on the three POA&M sheets:
 * row 2/3 CSP, System Name, Impact Level, POAM Date; row 5 the 31 column headers. "Open POA&M Items"
 * has a description row (6), a format row (7) and an example item (row 8, replaced by the data);
 * "Closed POA&M Items" has its data right under the headers (row 6). Items that are not closed go to
 * the open sheet, closed ones to the closed sheet. "Configuration Findings" stays empty (it is for
 * scanner configuration findings tracked outside the POA&M proper), "Record of Changes" is the
 * template's own history.
 */
export const TEMPLATE_PATH = projectPath('content', 'poam', 'FedRAMP-POAM-Template.xlsx');

export const SHEETS = {
  open: 'Open POA&M Items',
  closed: 'Closed POA&M Items',
  configuration: 'Configuration Findings',
} as const;

/** The header row and the first data row of each POA&M sheet. */
export const HEADER_ROW = 5;
export const FIRST_ROW = { open: 8, closed: 6 } as const;

/** The 31 column headers of the template's row 5, in order (checked against the file when exporting). */
export const COLUMNS = [
  'POAM ID',
  'Controls',
  'Weakness Name',
  'Weakness Description',
  'Weakness Detector Source',
  'Weakness Source Identifier',
  'Asset Identifier',
  'Point of Contact',
  'Resources Required',
  'Overall Remediation Plan',
  'Original Detection Date',
  'Scheduled Completion Date',
  'Planned Milestones',
  'Milestone Changes',
  'Status Date',
  'Vendor Dependency',
  'Last Vendor Check-in Date',
  'Vendor Dependent Product Name',
  'Original Risk Rating',
  'Adjusted Risk Rating',
  'Risk Adjustment',
  'False Positive',
  'Operational Requirement',
  'Deviation Rationale',
  'Supporting Documents',
  'Comments',
  'Auto-Approve',
  'Binding Operational Directive 22-01 tracking',
  'Binding Operational Directive 22-01 Due Date',
  'CVE',
  'Service Name',
] as const;

export const IMPACT_LEVELS = ['Low', 'Moderate', 'High'] as const;

export interface FedrampOptions {
  systemName?: string;
  impactLevel?: (typeof IMPACT_LEVELS)[number];
}

const DEVIATION_TYPES = ['Risk Adjustment', 'False Positive', 'Operational Requirement'] as const;

/**
 * Risk Adjustment, False Positive, Operational Requirement: "No" without a deviation request; with
 * one written as the template's "Deviation Type : Rationale", that type is "Pending"; with a request
 * of no recognisable type the three stay empty.
 */
export function deviationFlags(request: string | null): [string | null, string | null, string | null] {
  if (!request) return ['No', 'No', 'No'];
  const type = DEVIATION_TYPES.find((t) => request.toLowerCase().startsWith(t.toLowerCase()));
  if (!type) return [null, null, null];
  return DEVIATION_TYPES.map((t) => (t === type ? 'Pending' : 'No')) as [string, string, string];
}

const utcDate = (date: string) => new Date(`${date.slice(0, 10)}T00:00:00.000Z`);

/** One template row (31 cells) from an item. */
export function rowOf(item: ExportItem): Array<string | Date | null> {
  const f = item.finding;
  const documents = item.evidence.map((e) => `Remediation Evidence : ${e.filename} (sha256 ${e.sha256})`).join('\n');
  // "Controls" is FedRAMP's "Applicable 800-53 Control(s)": NIST ids only (ids are stored normalised,
  // another framework's as <framework>:<control>); those others are kept in Comments.
  const nist = item.control_ids.filter((id) => !id.includes(':'));
  const others = item.control_ids.filter((id) => id.includes(':'));
  const comments = [commentLog(item), others.length ? `Controls of other frameworks: ${others.join(', ')}` : ''].filter(Boolean).join('\n');
  return [
    item.id,
    nist.join(', ') || null,
    item.weakness_name,
    item.weakness_description,
    detectorSource(item),
    f ? f.rule_id : null,
    f ? `${f.resource_id}${f.resource_name && f.resource_name !== f.resource_id ? ` (${f.resource_name})` : ''}` : null,
    item.point_of_contact,
    null,
    f?.remediation || null,
    utcDate(detectionDate(item)),
    utcDate(item.scheduled_completion),
    plannedMilestones(item) || null,
    milestoneChanges(item) || null,
    utcDate(statusDate(item)),
    item.vendor_dependency ? 'Yes' : 'No',
    null,
    null,
    riskRating(item.severity),
    null,
    ...deviationFlags(item.deviation_request),
    item.deviation_request,
    documents || null,
    comments || null,
    null,
    null,
    null,
    f && f.cve_ids.length ? f.cve_ids.join(', ') : null,
    null,
  ];
}

/** Excel's cell limit; longer texts (long comment logs) are cut. */
const MAX_CELL = 32_767;

function xmlEscape(value: string): string {
  return (
    value
      // Characters XML 1.0 cannot carry at all.
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
  );
}

function xmlUnescape(value: string): string {
  return value
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_m, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, n: string) => String.fromCodePoint(parseInt(n, 16)))
    .replace(/&amp;/g, '&');
}

export function columnName(index: number): string {
  let n = index + 1;
  let name = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    name = String.fromCharCode(65 + r) + name;
    n = Math.floor((n - 1) / 26);
  }
  return name;
}

function columnIndex(name: string): number {
  let n = 0;
  for (const ch of name) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

/** Days since 1899-12-30 (Excel's 1900 date system). */
export function excelSerial(date: Date): number {
  return Math.round((date.getTime() - Date.UTC(1899, 11, 30)) / 86_400_000);
}

interface SheetXml {
  path: string;
  head: string;
  rows: Map<number, string>;
  tail: string;
}

interface Template {
  entries: ZipEntry[];
  sharedStrings: string[];
  sheets: Map<string, SheetXml>;
  styles: string;
}

let cached: Template | null = null;

function parseSheet(path: string, xml: string): SheetXml {
  const start = xml.indexOf('<sheetData');
  const end = xml.indexOf('</sheetData>');
  if (start < 0 || end < 0) throw new Error(`${TEMPLATE_PATH}: ${path} has no sheetData`);
  const open = xml.indexOf('>', start) + 1;
  const rows = new Map<number, string>();
  for (const match of xml.slice(open, end).matchAll(/<row [^>]*?r="(\d+)"[^>]*?(?:\/>|>[\s\S]*?<\/row>)/g)) rows.set(Number(match[1]), match[0]);
  return { path, head: xml.slice(0, open), rows, tail: xml.slice(end) };
}

/** The template, parsed once per process (its parts are immutable strings shared by every export). */
function template(): Template {
  if (cached) return cached;
  const entries = readZip(readFileSync(TEMPLATE_PATH));
  const part = (name: string) => {
    const entry = entries.find((e) => e.name === name);
    if (!entry) throw new Error(`${TEMPLATE_PATH}: no ${name}`);
    return entryData(entry).toString('utf8');
  };
  const sharedStrings = [...part('xl/sharedStrings.xml').matchAll(/<si>([\s\S]*?)<\/si>/g)].map((m) =>
    xmlUnescape([...m[1]!.matchAll(/<t(?: [^>]*)?>([\s\S]*?)<\/t>/g)].map((t) => t[1]).join('')),
  );
  const rels = new Map([...part('xl/_rels/workbook.xml.rels').matchAll(/<Relationship [^>]*?Id="([^"]+)"[^>]*?Target="([^"]+)"/g)].map((m) => [m[1]!, m[2]!]));
  const sheets = new Map<string, SheetXml>();
  for (const m of part('xl/workbook.xml').matchAll(/<sheet [^>]*?name="([^"]+)"[^>]*?r:id="([^"]+)"/g)) {
    const target = rels.get(m[2]!);
    if (!target) continue;
    const path = target.startsWith('/') ? target.slice(1) : `xl/${target}`;
    sheets.set(xmlUnescape(m[1]!), parseSheet(path, part(path)));
  }
  cached = { entries, sharedStrings, sheets, styles: part('xl/styles.xml') };
  return cached;
}

interface Cell {
  ref: string;
  column: number;
  attrs: string;
  body: string | null;
}

function cellsOf(row: string): Cell[] {
  const inner = row.slice(row.indexOf('>') + 1, row.lastIndexOf('</row>'));
  return [...inner.matchAll(/<c r="([A-Z]+)(\d+)"([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)].map((m) => ({
    ref: `${m[1]}${m[2]}`,
    column: columnIndex(m[1]!),
    attrs: m[3]!,
    body: m[4] ?? null,
  }));
}

const styleOf = (cell: Cell | undefined) => /\bs="(\d+)"/.exec(cell?.attrs ?? '')?.[1];

function cellText(cell: Cell, shared: string[]): string {
  if (!cell.body) return '';
  const v = /<v>([\s\S]*?)<\/v>/.exec(cell.body)?.[1];
  if (/\bt="s"/.test(cell.attrs) && v !== undefined) return shared[Number(v)] ?? '';
  const inline = /<t(?: [^>]*)?>([\s\S]*?)<\/t>/.exec(cell.body)?.[1];
  return xmlUnescape(inline ?? v ?? '');
}

/** The headers of a sheet's header row, as the template has them. */
export function templateHeaders(sheetName: string): string[] {
  const t = template();
  const sheet = t.sheets.get(sheetName);
  const row = sheet?.rows.get(HEADER_ROW);
  if (!row) return [];
  const cells = cellsOf(row);
  return COLUMNS.map((_, i) => cellText(cells.find((c) => c.column === i) ?? { ref: '', column: i, attrs: '', body: null }, t.sharedStrings).trim());
}

function valueCell(ref: string, style: string | undefined, value: string | number | Date | null): string {
  const s = style !== undefined ? ` s="${style}"` : '';
  if (value === null || value === '') return `<c r="${ref}"${s}/>`;
  if (value instanceof Date) return `<c r="${ref}"${s}><v>${excelSerial(value)}</v></c>`;
  if (typeof value === 'number') return `<c r="${ref}"${s}><v>${value}</v></c>`;
  const text = value.length > MAX_CELL ? `${value.slice(0, MAX_CELL - 1)}…` : value;
  return `<c r="${ref}"${s} t="inlineStr"><is><t xml:space="preserve">${xmlEscape(text)}</t></is></c>`;
}

/** A row tall enough for its longest cell (wrapped at about 30 characters in the template's 20.8-wide columns). */
function rowHeight(values: Array<string | Date | null>): number {
  let lines = 1;
  for (const v of values) {
    if (typeof v !== 'string') continue;
    const count = v.split('\n').reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / 30)), 0);
    lines = Math.max(lines, count);
  }
  return Math.min(409, Math.max(15, lines * 13));
}

/** Moves the text "row" of relative references in a shared formula by `offset` rows. */
function shiftFormula(formula: string, offset: number): string {
  return formula.replace(/("[^"]*")|(\$?)([A-Z]{1,3})(\$?)(\d+)(?![\d(])/g, (match, quoted: string | undefined, colAbs: string, col: string, rowAbs: string, row: string) =>
    quoted !== undefined ? match : `${colAbs}${col}${rowAbs}${rowAbs ? row : Number(row) + offset}`,
  );
}

interface Styles {
  text: string;
  date: string;
  xml: string;
}

/** Two cell styles appended to the template's: wrapped top-left text, and the same as a date. */
function withDataStyles(styles: string): Styles {
  const match = /<cellXfs count="(\d+)">([\s\S]*?)<\/cellXfs>/.exec(styles);
  if (!match) throw new Error(`${TEMPLATE_PATH}: styles.xml has no cellXfs`);
  const count = Number(match[1]);
  const added =
    '<xf numFmtId="0" fontId="4" fillId="0" borderId="0" xfId="0" applyFont="1" applyAlignment="1"><alignment horizontal="left" vertical="top" wrapText="1"/></xf>' +
    '<xf numFmtId="14" fontId="4" fillId="0" borderId="0" xfId="0" applyNumberFormat="1" applyFont="1" applyAlignment="1"><alignment horizontal="left" vertical="top" wrapText="1"/></xf>';
  const xml = styles.replace(match[0], `<cellXfs count="${count + 2}">${match[2]}${added}</cellXfs>`);
  return { text: String(count), date: String(count + 1), xml };
}

/**
 * Writes `rows` (31 values each) from `firstRow` on, keeping the template's cells right of column
 * AE. Shared formulas whose first cell is overwritten get a new first cell below the data.
 */
function fillRows(sheet: SheetXml, firstRow: number, rows: Array<Array<string | Date | null>>, styles: Styles): Map<number, string> {
  const result = new Map(sheet.rows);
  const lastData = firstRow + rows.length - 1;
  const orphaned: Array<{ si: string; column: string; end: number; formula: string; masterRow: number }> = [];
  rows.forEach((values, i) => {
    const r = firstRow + i;
    const kept = cellsOf(sheet.rows.get(r) ?? `<row r="${r}"></row>`);
    for (const c of kept) {
      const master = /<f t="shared" ref="([A-Z]+)(\d+):[A-Z]+(\d+)" si="(\d+)">([\s\S]*?)<\/f>/.exec(c.body ?? '');
      if (master && Number(master[3]) > lastData) orphaned.push({ si: master[4]!, column: master[1]!, end: Number(master[3]), formula: master[5]!, masterRow: Number(master[2]) });
    }
    const cells = values.map((v, col) => valueCell(`${columnName(col)}${r}`, v instanceof Date ? styles.date : styles.text, v));
    const rest = kept.filter((c) => c.column >= COLUMNS.length).map((c) => `<c r="${c.ref}"${c.attrs}${c.body === null ? '/>' : `>${c.body}</c>`}`);
    result.set(
      r,
      `<row r="${r}" spans="1:${Math.max(COLUMNS.length, ...kept.map((c) => c.column + 1))}" ht="${rowHeight(values)}" customHeight="1">${cells.join('')}${rest.join('')}</row>`,
    );
  });
  for (const group of orphaned) {
    const r = lastData + 1;
    const row = result.get(r);
    if (!row) continue;
    const clone = new RegExp(`(<c r="${group.column}${r}"[^>]*>)<f t="shared" si="${group.si}"/>`);
    const formula = xmlEscape(shiftFormula(xmlUnescape(group.formula), r - group.masterRow));
    result.set(r, row.replace(clone, `$1<f t="shared" ref="${group.column}${r}:${group.column}${group.end}" si="${group.si}">${formula}</f>`));
  }
  return result;
}

/** Replaces the values of cells A3..D3 (CSP, System Name, Impact Level, POAM Date), keeping their styles. */
function fillHeader(rows: Map<number, string>, values: Array<string | Date | null>): void {
  const row = rows.get(3);
  if (!row) return;
  let next = row;
  for (const cell of cellsOf(row)) {
    if (cell.column >= values.length) continue;
    const original = `<c r="${cell.ref}"${cell.attrs}${cell.body === null ? '/>' : `>${cell.body}</c>`}`;
    next = next.replace(original, valueCell(cell.ref, styleOf(cell), values[cell.column]!));
  }
  rows.set(3, next);
}

function serialize(sheet: SheetXml, rows: Map<number, string>): Buffer {
  const ordered = [...rows.entries()].sort((a, b) => a[0] - b[0]);
  const last = ordered.at(-1)?.[0] ?? 1;
  const head = sheet.head.replace(
    /<dimension ref="([A-Z]+\d+):([A-Z]+)(\d+)"\/>/,
    (_m, from: string, col: string, row: string) => `<dimension ref="${from}:${col}${Math.max(Number(row), last)}"/>`,
  );
  return Buffer.from(head + ordered.map(([, xml]) => xml).join('') + sheet.tail, 'utf8');
}

export async function fedrampWorkbook(data: ExportData, options: FedrampOptions = {}): Promise<Buffer> {
  const t = template();
  const open = t.sheets.get(SHEETS.open);
  const closed = t.sheets.get(SHEETS.closed);
  if (!open || !closed) throw new Error(`${TEMPLATE_PATH}: not the FedRAMP POA&M template (sheets ${[...t.sheets.keys()].join(', ')})`);
  for (const name of [SHEETS.open, SHEETS.closed]) {
    const headers = templateHeaders(name);
    if (headers.join('|') !== COLUMNS.join('|')) throw new Error(`${TEMPLATE_PATH}: unexpected headers on "${name}": ${headers.join(', ')}`);
  }
  const styles = withDataStyles(t.styles);
  const header = [data.tenant.name, options.systemName ?? data.workspace.name, options.impactLevel ?? null, utcDate(data.generatedAt.toISOString())];
  const openRows = data.items.filter((i) => i.status !== 'closed').map(rowOf);
  const closedRows = data.items.filter((i) => i.status === 'closed').map(rowOf);
  const replaced = new Map<string, Buffer>();
  for (const [name, sheet] of t.sheets) {
    let rows: Map<number, string> | null = null;
    if (name === SHEETS.open) {
      // Without open items the template's example item (row 8) still goes.
      rows = fillRows(sheet, FIRST_ROW.open, openRows, styles);
      if (openRows.length === 0)
        rows.set(FIRST_ROW.open, `<row r="${FIRST_ROW.open}" spans="1:51">${COLUMNS.map((_, col) => `<c r="${columnName(col)}${FIRST_ROW.open}" s="3"/>`).join('')}</row>`);
    } else if (name === SHEETS.closed) {
      rows = fillRows(sheet, FIRST_ROW.closed, closedRows, styles);
    } else if (name === SHEETS.configuration) {
      rows = new Map(sheet.rows);
    }
    if (!rows) continue;
    fillHeader(rows, header);
    replaced.set(sheet.path, serialize(sheet, rows));
  }
  replaced.set('xl/styles.xml', Buffer.from(styles.xml, 'utf8'));

  // The calculation chain lists the formula cells the data replaced: drop it, Excel rebuilds it.
  const entries: ZipEntry[] = [];
  for (const entry of t.entries) {
    if (entry.name === 'xl/calcChain.xml') continue;
    let data = replaced.get(entry.name);
    if (entry.name === '[Content_Types].xml')
      data = Buffer.from(
        entryData(entry)
          .toString('utf8')
          .replace(/<Override PartName="\/xl\/calcChain\.xml"[^>]*\/>/, ''),
        'utf8',
      );
    if (entry.name === 'xl/_rels/workbook.xml.rels')
      data = Buffer.from(
        entryData(entry)
          .toString('utf8')
          .replace(/<Relationship [^>]*Target="calcChain\.xml"[^>]*\/>/, ''),
        'utf8',
      );
    entries.push(data ? deflatedEntry(entry, data) : entry);
  }
  return writeZip(entries);
}
