import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';

/**
 * Streams the items of one JSON array out of a document of any size, in constant memory (the full
 * NVD is several GB, a scanner's export hundreds of MB):
 * - a top-level array: each element is an item (OSV exports, Prowler's OCSF output);
 * - a top-level object: the elements of the array at one of the `itemsAt` key paths are the items
 *   (KEV and NVD `vulnerabilities`, osv.dev's `vulns`, Security Hub's `Findings` or, in a recorded
 *   API call, `data.Findings`); the first path met wins. Its other members are parsed into `header`
 *   (catalogVersion, count, totalResults, ...). An object without such an array is itself the
 *   header (a single OSV record).
 *
 * How: a byte-level scanner follows strings, escapes and nesting depth only to find where each item
 * starts and ends, and hands each item's bytes to the native JSON.parse. A token-by-token parser
 * (stream-json) read NVD feeds at about 5 MB/s; this reads them at the speed of JSON.parse. UTF-8 is
 * safe to scan bytewise: multi-byte sequences never contain the ASCII structural characters. Errors
 * carry the exact byte offset where the document broke.
 */
export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** One record (and the header around the records) is parsed whole: beyond this it is refused. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

export class ItemExtractor extends Transform {
  header: Record<string, unknown> = {};
  topLevel: 'array' | 'object' | null = null;
  items = 0;

  private offset = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** `depth` between the elements of the items array (0 when not inside it). */
  private itemDepth = 0;
  private itemsDone = false;
  /** The item being read: its chunks, and where it started. */
  private item: Buffer[] | null = null;
  private itemStart = 0;
  private itemBytes = 0;
  /** The key each open container outside the records was the value of, by depth (null: an array element). */
  private keys: Array<string | null> = [];
  private readonly paths: string[][];
  /** Everything outside the items array (its brackets included): the header. */
  private headerParts: Buffer[] = [];
  private headerBytes = 0;

  constructor(itemsAt: ItemsAt) {
    super({ readableObjectMode: true });
    this.paths = itemsAt === null ? [] : typeof itemsAt === 'string' ? [[itemsAt]] : itemsAt.map((p) => (typeof p === 'string' ? [p] : p));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.scan(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  private fail(message: string, at: number): never {
    throw new JsonSyntaxError(`${message} at byte ${at}`, at);
  }

  /** Between the brackets of the items array, outside an item: bytes there are dropped. */
  private get inItems(): boolean {
    return this.itemDepth > 0 && this.depth >= this.itemDepth;
  }

  private keepHeader(bytes: Buffer): void {
    this.headerBytes += bytes.length;
    // A single record read as the header is small; a huge "header" means the items key is missing.
    if (this.headerBytes > MAX_RECORD_BYTES) this.fail('JSON document too large outside its array of records', this.offset);
    this.headerParts.push(bytes);
  }

  /** The key of the member whose value is the container just opened (the header ends with `"key": [` or `"key": {`). */
  private lastKey(): string | null {
    let tail = '';
    for (let k = this.headerParts.length - 1; k >= 0 && tail.length < 512; k--) tail = this.headerParts[k]!.toString('utf8') + tail;
    const match = /"((?:[^"\\]|\\.)*)"\s*:\s*[[{]$/.exec(tail);
    if (!match) return null;
    try {
      return JSON.parse(`"${match[1]}"`) as string;
    } catch {
      return null;
    }
  }

  private scan(chunk: Buffer): void {
    const base = this.offset;
    let mark = 0;
    let i = 0;
    // Sends chunk[mark, end) where it belongs: the open item, the header, or nowhere.
    const route = (end: number) => {
      if (end <= mark) return;
      const part = chunk.subarray(mark, end);
      if (this.item) {
        this.itemBytes += part.length;
        // The largest real record (an NVD CVE with thousands of CPE matches) is a few MB: a record
        // this large is not one, and holding it to parse it would cost its size in memory.
        if (this.itemBytes > MAX_RECORD_BYTES) this.fail(`a record larger than ${MAX_RECORD_BYTES} bytes`, this.itemStart);
        this.item.push(part);
      } else if (!this.inItems) this.keepHeader(part);
      mark = end;
    };
    while (i < chunk.length) {
      if (this.inString) {
        if (this.escaped) {
          // The previous chunk ended with an escaping backslash.
          this.escaped = false;
          i++;
          continue;
        }
        // Jump to the next quote natively; it closes the string unless an odd run of backslashes precedes it.
        const quote = chunk.indexOf(QUOTE, i);
        if (quote < 0) {
          let run = 0;
          for (let k = chunk.length - 1; k >= i && chunk[k] === BACKSLASH; k--) run++;
          this.escaped = run % 2 === 1;
          i = chunk.length;
          continue;
        }
        let run = 0;
        for (let k = quote - 1; k >= i && chunk[k] === BACKSLASH; k--) run++;
        i = quote + 1;
        if (run % 2 === 0) this.inString = false;
        continue;
      }
      const c = chunk[i]!;
      if (isSpace(c)) {
        i++;
        continue;
      }
      const at = base + i;
      if (this.depth === 0) {
        if (this.topLevel !== null) this.fail('unexpected content after the JSON document', at);
        if (c === OPEN_ARRAY) {
          this.topLevel = 'array';
          this.itemDepth = 1;
        } else if (c === OPEN_OBJECT) {
          this.topLevel = 'object';
        } else {
          this.fail('expected a JSON object or array', at);
        }
        this.depth = 1;
        i++;
        route(i);
        continue;
      }
      if (this.itemDepth && this.depth === this.itemDepth && !this.item) {
        // Between records: separators are dropped, the closing bracket ends the array.
        if (c === COMMA) {
          i++;
          route(i);
          continue;
        }
        if (c === CLOSE_ARRAY) {
          route(i);
          this.itemDepth = 0;
          this.itemsDone = true;
          this.depth--;
          i++;
          continue;
        }
        route(i);
        this.item = [];
        this.itemBytes = 0;
        this.itemStart = at;
      }
      switch (c) {
        case QUOTE:
          this.inString = true;
          i++;
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          i++;
          if (this.topLevel === 'object' && !this.item && !this.itemsDone && this.paths.length) {
            // Outside the records the document is small: each container's key is read from the header's tail.
            route(i);
            this.keys[this.depth] = this.lastKey();
            if (c === OPEN_ARRAY && this.isItemsPath()) this.itemDepth = this.depth + 1;
          }
          this.depth++;
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          if (this.item && this.depth === this.itemDepth) {
            // A bare value was the last record: it ends with the array.
            route(i);
            this.completeItem();
            this.itemDepth = 0;
            this.itemsDone = true;
          }
          this.depth--;
          i++;
          if (this.item && this.depth === this.itemDepth) {
            route(i);
            this.completeItem();
          }
          break;
        case COMMA:
          if (this.item && this.depth === this.itemDepth) {
            // The end of a bare value (number, true, false, null, string) record.
            route(i);
            this.completeItem();
          }
          i++;
          break;
        default:
          i++;
      }
    }
    route(chunk.length);
    this.offset += chunk.length;
  }

  /** The container just opened (at this.depth) is at one of the items paths: its keys from depth 1 match. */
  private isItemsPath(): boolean {
    return this.paths.some((path) => path.length === this.depth && path.every((key, n) => this.keys[n + 1] === key));
  }

  private completeItem(): void {
    const parts = this.item!;
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    this.item = null;
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      this.fail(`invalid JSON in the record starting (${(error as Error).message})`, this.itemStart);
    }
    // null would end the object stream; no source has null records.
    if (value === null) this.fail('a null record', this.itemStart);
    this.items++;
    this.push(value);
  }

  override _flush(callback: TransformCallback): void {
    try {
      if (this.topLevel === null) this.fail('no JSON content', this.offset);
      if (this.depth !== 0 || this.inString || this.item) this.fail('unexpected end of JSON: the file is truncated', this.offset);
      if (this.topLevel === 'object') {
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.concat(this.headerParts).toString('utf8'));
        } catch (error) {
          this.fail(`invalid JSON outside the records (${(error as Error).message})`, this.offset);
        }
        this.header = parsed as Record<string, unknown>;
      }
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }
}

/**
 * Where the records are in a top-level object: a key (`"vulnerabilities"`), or alternative key
 * paths (`[['Findings'], ['data', 'Findings']]`); null for a document whose records are a top-level
 * array only.
 */
export type ItemsAt = string | null | Array<string | string[]>;

/** Streams the items of a JSON document (see ItemExtractor); the extractor carries the header. */
export function jsonItems(input: Readable, itemsAt: ItemsAt): ItemExtractor {
  const extractor = new ItemExtractor(itemsAt);
  pipeline(input, extractor, () => undefined);
  return extractor;
}
