import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { jsonItems, MAX_RECORD_BYTES, type ItemsAt } from '../../src/platform/json/json-items.js';
import { projectPath } from '../../src/platform/paths.js';

// Real feeds the vulndb importer reads (test/fixtures/vulndb/SOURCES.md).
const KEV_JSON = projectPath('test', 'fixtures', 'vulndb', 'known_exploited_vulnerabilities.json');
const NVD_FEED = projectPath('test', 'fixtures', 'vulndb', 'nvd-cve-2.0-sample-feed.json');

/** Feeds the text in chunks of `size` bytes (1 puts every boundary everywhere). */
async function extract(text: string | Buffer, itemsKey: ItemsAt, size = 1) {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const extractor = jsonItems(Readable.from(chunks), itemsKey);
  const items: unknown[] = [];
  for await (const item of extractor) items.push(item);
  return { items, header: extractor.header, topLevel: extractor.topLevel };
}

describe('streaming JSON record extraction', () => {
  it('refuses a record larger than MAX_RECORD_BYTES instead of holding it (an archive entry or array element of any size)', async () => {
    const piece = Buffer.alloc(1024 * 1024, 0x61);
    async function* huge() {
      yield Buffer.from('[{"id":"GHSA-x"},{"details":"');
      for (let i = 0; i <= MAX_RECORD_BYTES / piece.length; i++) yield piece;
      yield Buffer.from('"}]');
    }
    const extractor = jsonItems(Readable.from(huge()), null);
    const items: unknown[] = [];
    await expect(
      (async () => {
        for await (const item of extractor) items.push(item);
      })(),
    ).rejects.toThrow(`a record larger than ${MAX_RECORD_BYTES} bytes`);
  });

  it('reads the records of a top-level array and of an object member, keeping the other members', async () => {
    expect(await extract('[{"a":1},{"b":[1,2,{"c":"]"}]}]', null)).toEqual({ items: [{ a: 1 }, { b: [1, 2, { c: ']' }] }], header: {}, topLevel: 'array' });
    const doc = '{"count": 2, "vulnerabilities": [ {"id": "x", "vulnerabilities": [9]} , {"id": "y"} ], "title": "after"}';
    expect(await extract(doc, 'vulnerabilities')).toEqual({
      items: [{ id: 'x', vulnerabilities: [9] }, { id: 'y' }],
      header: { count: 2, vulnerabilities: [], title: 'after' },
      topLevel: 'object',
    });
  });

  it('finds the records at the first of several key paths, nested in objects (a recorded API call wraps them in data)', async () => {
    const paths: ItemsAt = [['Findings'], ['findings'], ['data', 'Findings']];
    const recorded = '{"status_code": 200, "other": [{"Findings": [0]}], "data": {"Findings": [{"Id": "a"}, {"Id": "b"}], "NextToken": "t"}}';
    for (const size of [1, 5, 100_000]) {
      expect(await extract(recorded, paths, size), `chunks of ${size}`).toEqual({
        items: [{ Id: 'a' }, { Id: 'b' }],
        header: { status_code: 200, other: [{ Findings: [0] }], data: { Findings: [], NextToken: 't' } },
        topLevel: 'object',
      });
    }
    expect((await extract('{"findings": [{"Id": "c"}]}', paths)).items).toEqual([{ Id: 'c' }]);
    // A path matches from the top: Findings under another key is header.
    expect((await extract('{"meta": {"Findings": [1]}}', paths)).items).toEqual([]);
  });

  it('is not fooled by brackets, quotes, escapes and multi-byte characters in strings, at any chunk boundary', async () => {
    const tricky = [{ s: 'a "quoted" } ] { [ string \\ with \\" escapes' }, { s: 'ünïcødé ✓ \u2028 "}"', n: -1.5e3 }, { s: '\\\\' }, { s: '' }];
    const doc = JSON.stringify({ vulnerabilities: tricky, note: 'key "vulnerabilities": [' });
    for (const size of [1, 2, 3, 7, 64, 100_000]) {
      expect(await extract(doc, 'vulnerabilities', size), `chunks of ${size}`).toEqual({
        items: tricky,
        header: { vulnerabilities: [], note: 'key "vulnerabilities": [' },
        topLevel: 'object',
      });
    }
  });

  it('reads an object without the array as the header (a single record), and bare values as records', async () => {
    expect(await extract('{"id": "GHSA-1", "aliases": ["CVE-2024-0001"], "affected": []}', 'vulns')).toMatchObject({
      items: [],
      header: { id: 'GHSA-1', aliases: ['CVE-2024-0001'], affected: [] },
    });
    expect((await extract('[1, "two", true, [3], {}]', null)).items).toEqual([1, 'two', true, [3], {}]);
    expect((await extract('[1, "two", false]', null)).items).toEqual([1, 'two', false]);
    await expect(extract('[{"a": 1}, null]', null)).rejects.toThrow(/a null record at byte 11/);
    expect((await extract('{"vulns": []}', 'vulns')).items).toEqual([]);
  });

  it('gives the byte offset where a document breaks', async () => {
    const cut = '{"vulnerabilities": [{"a": 1}, {"b": 2';
    await expect(extract(cut, 'vulnerabilities')).rejects.toThrow(`unexpected end of JSON: the file is truncated at byte ${cut.length}`);
    await expect(extract('[{"a": "unterminated', null)).rejects.toThrow(/truncated at byte 20/);
    await expect(extract('[{"a": 1}, {"b": tru}]', null)).rejects.toThrow(/invalid JSON in the record starting .* at byte 11/);
    await expect(extract('[{"a": 1}] [', null)).rejects.toThrow(/unexpected content after the JSON document at byte 11/);
    await expect(extract('nope', null)).rejects.toThrow(/expected a JSON object or array at byte 0/);
    await expect(extract('', null)).rejects.toThrow(/no JSON content/);
  });

  it('reads the real KEV catalog and NVD feed like JSON.parse does', async () => {
    const kev = JSON.parse(readFileSync(KEV_JSON, 'utf8'));
    const kevOut = await extract(readFileSync(KEV_JSON), 'vulnerabilities', 4096);
    expect(kevOut.items).toEqual(kev.vulnerabilities);
    expect(kevOut.header).toEqual({ ...kev, vulnerabilities: [] });
    const nvd = JSON.parse(readFileSync(NVD_FEED, 'utf8'));
    const nvdOut = await extract(readFileSync(NVD_FEED), 'vulnerabilities', 1000);
    expect(nvdOut.items).toEqual(nvd.vulnerabilities);
    expect(nvdOut.header).toEqual({ ...nvd, vulnerabilities: [] });
  });
});
