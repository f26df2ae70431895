import { parse as parseCsv } from 'csv-parse';
import type { OpenedInput } from './input.js';
import type { InputFormat } from './detect.js';
import { jsonItems, JsonSyntaxError } from '../../../platform/json/json-items.js';
import { epssRow, kevRow, nvdRows, osvRows, parseEpssComment, RecordError, type AffectedRow, type CpeRow, type CveRow, type EpssRow, type KevRow, type OsvRow } from './records.js';

export type ParsedRecord =
  { source: 'kev'; row: KevRow } | { source: 'epss'; row: EpssRow } | { source: 'nvd'; row: CveRow; cpes: CpeRow[] } | { source: 'osv'; row: OsvRow; affected: AffectedRow[] };

/** Where a broken file broke: the byte offset reached, the records read before, what was last read. */
export class ImportError extends Error {
  override name = 'ImportError';
  constructor(
    message: string,
    readonly offset: number | null,
    readonly record: number | null,
    readonly context: string | null,
  ) {
    super(message);
  }
}

/** Progress of one import, updated as records are read; `metadata` collects the file's header data. */
export interface ParseProgress {
  records: number;
  lastId: string | null;
  metadata: Record<string, unknown>;
}

function idOf(record: ParsedRecord): string {
  return record.source === 'osv' ? record.row.id : record.row.cve_id;
}

/**
 * Reads one input of a known format and yields its records, normalised. Any problem (malformed JSON
 * or CSV, a truncated file, a record without a valid id, a header count that does not match) throws
 * an ImportError carrying the byte offset (of the decompressed content) and the record number.
 */
export async function* parseInput(input: OpenedInput, format: InputFormat, progress: ParseProgress): AsyncGenerator<ParsedRecord> {
  const fail = (error: unknown): never => {
    if (error instanceof ImportError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    // The JSON scanner knows the exact offset; csv-parse reports the record's; else how far we read.
    const jsonOffset = error instanceof JsonSyntaxError ? error.offset : undefined;
    const csvBytes = (error as { bytes?: number }).bytes;
    const csvLine = (error as { lines?: number }).lines;
    const offset = jsonOffset ?? (typeof csvBytes === 'number' ? csvBytes : input.decoded.bytes);
    const where = [`${input.name}`, typeof csvLine === 'number' ? `line ${csvLine}` : null, progress.lastId ? `after ${progress.lastId}` : 'before the first record'].filter(
      Boolean,
    );
    throw new ImportError(message, offset, progress.records, where.join(', '));
  };
  try {
    const source = format === 'kev-json' || format === 'kev-csv' ? 'kev' : format === 'epss-csv' ? 'epss' : format === 'nvd-json' ? 'nvd' : 'osv';
    for await (const record of recordsOf(input, format, progress)) {
      const parsed = { source, ...record } as ParsedRecord;
      progress.records++;
      progress.lastId = idOf(parsed);
      yield parsed;
    }
  } catch (error) {
    fail(error);
  }
}

type Rows = ParsedRecord extends infer R ? (R extends ParsedRecord ? Omit<R, 'source'> : never) : never;

async function* recordsOf(input: OpenedInput, format: InputFormat, progress: ParseProgress): AsyncGenerator<Rows> {
  switch (format) {
    case 'kev-json':
      return yield* kevJson(input, progress);
    case 'kev-csv':
      return yield* csvRecords(input, (r) => ({ row: kevRow(r) }), {});
    case 'epss-csv':
      return yield* epssCsv(input, progress);
    case 'nvd-json':
      return yield* nvdJson(input, progress);
    case 'osv-json':
      return yield* osvJson(input);
  }
}

async function* kevJson(input: OpenedInput, progress: ParseProgress): AsyncGenerator<Rows> {
  const items = jsonItems(input.stream, 'vulnerabilities');
  for await (const item of items) yield { row: kevRow(item as Record<string, unknown>) };
  const header = items.header;
  if (!('catalogVersion' in header) && items.items === 0) throw new RecordError('not a KEV catalog: no catalogVersion and no vulnerabilities');
  if (typeof header.count === 'number' && header.count !== items.items) {
    throw new RecordError(`the catalog says count ${header.count} but holds ${items.items} vulnerabilities`);
  }
  progress.metadata.catalog_version = typeof header.catalogVersion === 'string' ? header.catalogVersion : null;
  progress.metadata.date_released = typeof header.dateReleased === 'string' ? header.dateReleased : null;
  progress.metadata.count = items.items;
}

/** CSV with a header row; the content must end with a newline (a cut-off last line is refused). */
async function* csvRecords(input: OpenedInput, toRows: (record: Record<string, unknown>) => Rows, options: { comment?: boolean }): AsyncGenerator<Rows> {
  const parser = parseCsv({
    columns: (header: string[]) => header.map((h) => h.trim()),
    bom: true,
    skip_empty_lines: true,
    // Each record comes with its own line and byte position, for error locations.
    info: true,
    ...(options.comment ? { comment: '#', comment_no_infix: true } : {}),
  });
  input.stream.on('error', (error) => parser.destroy(error));
  input.stream.pipe(parser);
  for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, unknown>; info: { lines: number; bytes: number } }>) {
    try {
      yield toRows(record);
    } catch (error) {
      if (error instanceof RecordError) Object.assign(error, { lines: info.lines, bytes: info.bytes });
      throw error;
    }
  }
  if (input.decoded.bytes > 0 && input.decoded.lastByte !== 0x0a) {
    throw Object.assign(new RecordError('the file does not end with a newline: it looks truncated'), { bytes: input.decoded.bytes, lines: parser.info.lines });
  }
}

async function* epssCsv(input: OpenedInput, progress: ParseProgress): AsyncGenerator<Rows> {
  // The published daily file starts with "#model_version:…,score_date:…"; mirrors often drop it.
  if (input.head.startsWith('#')) {
    const line = input.head.slice(0, input.head.indexOf('\n') >= 0 ? input.head.indexOf('\n') : undefined).replace(/\r$/, '');
    Object.assign(progress.metadata, parseEpssComment(line));
  } else {
    Object.assign(progress.metadata, { model_version: null, score_date: null });
  }
  yield* csvRecords(input, (r) => ({ row: epssRow(r) }), { comment: true });
}

async function* nvdJson(input: OpenedInput, progress: ParseProgress): AsyncGenerator<Rows> {
  const items = jsonItems(input.stream, 'vulnerabilities');
  for await (const item of items) {
    const cve = (item as { cve?: unknown })?.cve;
    if (!cve || typeof cve !== 'object') throw new RecordError('a vulnerabilities[] entry without a cve object');
    const { cve: row, cpes } = nvdRows(cve as Record<string, unknown>);
    yield { row, cpes };
  }
  const h = items.header;
  if (items.topLevel !== 'object' || (!('vulnerabilities' in h) && items.items === 0 && !('format' in h))) {
    throw new RecordError('not an NVD CVE API 2.0 document: no vulnerabilities array');
  }
  // An API page or feed states how many records it holds: fewer means a cut-off download.
  if (typeof h.resultsPerPage === 'number' && typeof h.totalResults === 'number') {
    const start = typeof h.startIndex === 'number' ? h.startIndex : 0;
    const expected = Math.min(h.resultsPerPage, Math.max(0, h.totalResults - start));
    if (items.items !== h.resultsPerPage && items.items !== expected) {
      throw new RecordError(`the page says resultsPerPage ${h.resultsPerPage} but holds ${items.items} vulnerabilities`);
    }
  }
  progress.metadata.format = typeof h.format === 'string' ? h.format : null;
  progress.metadata.version = typeof h.version === 'string' ? h.version : null;
  progress.metadata.timestamp = typeof h.timestamp === 'string' ? h.timestamp : null;
  progress.metadata.total_results = typeof h.totalResults === 'number' ? h.totalResults : null;
}

async function* osvJson(input: OpenedInput): AsyncGenerator<Rows> {
  const items = jsonItems(input.stream, 'vulns');
  for await (const item of items) {
    if (!item || typeof item !== 'object' || Array.isArray(item)) throw new RecordError('an OSV array element that is not an object');
    const { advisory, affected } = osvRows(item as Record<string, unknown>);
    yield { row: advisory, affected };
  }
  if (items.topLevel === 'object' && items.items === 0) {
    // A single advisory: the whole document was read as the "header".
    if (typeof items.header.id !== 'string') throw new RecordError('not an OSV record: no id');
    const { advisory, affected } = osvRows(items.header);
    yield { row: advisory, affected };
  }
}
