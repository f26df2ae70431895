import { createReadStream, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { ImportItem, ImportParser, ImportedFinding, RecordError } from '../../src/modules/discovery/imports/import-record.js';

/** Reading the copied scanner samples (test/fixtures/imports, sources in SOURCES-asff-sarif.md) through a parser. */

export const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/imports/${name}`, import.meta.url));

export const fixtureText = (name: string) => readFileSync(fixture(name), 'utf8');

/** Detection sees the file's first 64 KiB as text, as the import route gives it. */
export const head = (name: string) =>
  readFileSync(fixture(name))
    .subarray(0, 64 * 1024)
    .toString('utf8');

/** Small chunks, so records and strings cross chunk boundaries as they do in a real upload. */
export const fileStream = (name: string) => createReadStream(fixture(name), { highWaterMark: 1024 });

export const textStream = (content: string | Buffer) => Readable.from([Buffer.from(content)]);

export async function collect(parser: ImportParser, input: Readable): Promise<ImportItem[]> {
  const items: ImportItem[] = [];
  for await (const item of parser.parse(input)) items.push(item);
  return items;
}

export const findingsOf = (items: ImportItem[]) => items.filter((i): i is ImportedFinding => i.kind === 'finding');
export const errorsOf = (items: ImportItem[]) => items.filter((i): i is RecordError => i.kind === 'error');

export function countBy<T>(values: T[], key: (value: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[key(value)] = (counts[key(value)] ?? 0) + 1;
  return counts;
}

/** Every record the parser yields before it throws, and what it threw. */
export async function collectUntilError(parser: ImportParser, input: Readable): Promise<{ items: ImportItem[]; error: unknown }> {
  const items: ImportItem[] = [];
  try {
    for await (const item of parser.parse(input)) items.push(item);
  } catch (error) {
    return { items, error };
  }
  return { items, error: null };
}

/**
 * A JSON array of `count` copies of a record, produced on demand, and how much of it was produced:
 * a parser that streams reads a little ahead of what it yields, one that reads the file whole
 * drains it all first.
 */
export function generatedArray(open: string, record: unknown, count: number, close: string): { stream: Readable; produced: () => number } {
  let produced = 0;
  const text = JSON.stringify(record);
  async function* chunks() {
    yield Buffer.from(open);
    for (let n = 0; n < count; n++) {
      produced++;
      yield Buffer.from(n ? `,${text}` : text);
    }
    yield Buffer.from(close);
  }
  return { stream: Readable.from(chunks(), { objectMode: false }), produced: () => produced };
}

/** The first `n` items, then stop (the parser's stream is closed by the loop's return). */
export async function take(parser: ImportParser, input: Readable, n: number): Promise<ImportItem[]> {
  const items: ImportItem[] = [];
  for await (const item of parser.parse(input)) {
    items.push(item);
    if (items.length >= n) break;
  }
  return items;
}
