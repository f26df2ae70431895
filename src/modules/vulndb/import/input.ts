import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PassThrough, Readable, Transform, type TransformCallback } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createGunzip } from 'node:zlib';
import { checkOutboundUrl, OutboundError, outboundFetch, type OutboundPolicy } from '../../../platform/outbound/index.js';

/**
 * Opening an import location: a local file, a directory of files, or an http(s) URL (archives:
 * import/archive.ts). Content is streamed; gzip is recognised by its magic bytes whatever the name. The first bytes of the
 * (decompressed) content are sniffed for format detection and then replayed, and byte counters and a
 * SHA-256 of the raw bytes run alongside, so an error can say where the file broke.
 */

/**
 * What decompression (gzip, zip and tar entries) may produce in one import, all its inputs together:
 * a few kilobytes of zip or gzip can expand to terabytes (a "zip bomb"). Shared by the counters of
 * one import; the counter that goes past it fails its stream with `error()`.
 */
export class ExpansionBudget {
  used = 0;
  constructor(
    readonly maxBytes: number,
    /** The setting that raises the limit, named in the refusal. */
    readonly setting = 'CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES',
  ) {}
  get left(): number {
    return this.maxBytes - this.used;
  }
  error(name: string): Error {
    return new Error(`${name} expands to more than ${this.maxBytes} bytes (${this.setting}): refused as a possible zip bomb`);
  }
}

/** Counts the bytes flowing through (and optionally hashes them). */
export class ByteCounter extends Transform {
  bytes = 0;
  /** The last byte seen (-1 before any): a text file cut off mid-line does not end with a newline. */
  lastByte = -1;
  private readonly hash: Hash | null;
  constructor(
    private readonly onChunk?: () => void,
    /** Decompressed content counts against the import's budget (null: not decompressed, not counted). */
    public budget: { budget: ExpansionBudget; name: string } | null = null,
    /** Whether `digest()` is wanted (hashing costs; an archive entry's or decoded content's is not). */
    hash = true,
  ) {
    super();
    this.hash = hash ? createHash('sha256') : null;
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (chunk.length) this.lastByte = chunk[chunk.length - 1]!;
    if (this.budget) {
      this.budget.budget.used += chunk.length;
      if (this.budget.budget.used > this.budget.budget.maxBytes) return callback(this.budget.budget.error(this.budget.name));
    }
    this.hash?.update(chunk);
    this.onChunk?.();
    callback(null, chunk);
  }
  digest(): string {
    if (!this.hash) throw new Error('this byte counter does not hash');
    return this.hash.copy().digest('hex');
  }
}

export interface OpenedInput {
  /** Decompressed content, starting with `head` (the replayed sniffed bytes). */
  stream: Readable;
  /** The first bytes of the decompressed content (up to 64 KiB), for format detection. */
  head: string;
  /** The same bytes undecoded (a tar archive is told by bytes 257-261). */
  headBytes: Buffer;
  gzip: boolean;
  /** Counts raw bytes (and digests them); `decoded` counts the decompressed bytes read so far. */
  raw: ByteCounter;
  decoded: ByteCounter;
  name: string;
}

const SNIFF_BYTES = 64 * 1024;

/** Reads up to `limit` bytes from a stream, then returns them and a stream replaying everything. */
export async function sniff(stream: Readable, limit: number): Promise<{ head: Buffer; replay: Readable }> {
  const iterator = stream[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  while (size < limit) {
    const next = await iterator.next();
    if (next.done) {
      finished = true;
      break;
    }
    const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    chunks.push(chunk);
    size += chunk.length;
  }
  const head = Buffer.concat(chunks);
  const replay = Readable.from(
    (async function* () {
      if (head.length) yield head;
      if (finished) return;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value as Buffer;
      }
    })(),
    { objectMode: false },
  );
  return { head, replay };
}

export interface PrepareOptions {
  /** Called as raw bytes arrive (keeps a download's stall timer from firing). */
  onProgress?: () => void;
  /** The import's expansion budget: gunzipped content counts against it, and all of an archive entry's. */
  budget?: ExpansionBudget;
  /** The stream is an archive entry's content (decompressed already): all of it counts. */
  archived?: boolean;
}

/** Wraps a raw byte stream: counts and digests it, gunzips when it is gzip, sniffs the head. */
export async function prepareInput(rawStream: Readable, name: string, options: PrepareOptions = {}): Promise<OpenedInput> {
  const { onProgress, budget } = options;
  // The SHA-256 of a file's raw bytes tells an unchanged sync location; an archive entry's is not needed.
  const raw = new ByteCounter(onProgress, null, !options.archived);
  rawStream.on('error', (error) => raw.destroy(error));
  rawStream.pipe(raw);
  const first = await sniff(raw, 2);
  const gzip = first.head.length >= 2 && first.head[0] === 0x1f && first.head[1] === 0x8b;
  let body: Readable = first.replay;
  if (gzip) {
    const gunzip = createGunzip();
    first.replay.on('error', (error) => gunzip.destroy(error));
    body = first.replay.pipe(gunzip);
  }
  const decoded = new ByteCounter(undefined, budget && (gzip || options.archived) ? { budget, name } : null, false);
  body.on('error', (error) => decoded.destroy(error));
  body.pipe(decoded);
  const second = await sniff(decoded, SNIFF_BYTES);
  // Strip a UTF-8 byte order mark for detection; parsers get the same bytes as detection saw.
  let head = second.head.toString('utf8');
  if (head.charCodeAt(0) === 0xfeff) head = head.slice(1);
  const passthrough = new PassThrough();
  second.replay.on('error', (error) => passthrough.destroy(error));
  second.replay.pipe(passthrough);
  return { stream: passthrough, head, headBytes: second.head, gzip, raw, decoded, name };
}

export type LocationKind = 'url' | 'file' | 'directory';

export function isUrl(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

/** A local path from a plain path or a file:// URL, resolved against the working directory. */
export function localPath(location: string): string {
  return location.startsWith('file://') ? fileURLToPath(location) : resolve(location);
}

/**
 * Source URLs go through the platform's outbound guard (platform/outbound): https only, public
 * addresses only, each redirect checked again. The KEV catalog decides which findings become
 * CRITICAL, so its content must not be open to tampering on the way. A local mirror (http, a private
 * or loopback address) is reached only when the operator allow-lists it (CONTROLGRAPH_OUTBOUND_ALLOW_HOSTS).
 * Checks what needs no DNS; the name's addresses are checked on every connection.
 */
export function checkUrl(policy: OutboundPolicy, location: string): URL {
  try {
    return checkOutboundUrl(policy, location);
  } catch (error) {
    throw new Error(`"${location}": ${(error as Error).message}`);
  }
}

export async function locationKind(location: string): Promise<LocationKind> {
  if (isUrl(location)) return 'url';
  const info = await stat(localPath(location)).catch(() => null);
  if (!info) throw new Error(`"${location}" does not exist`);
  return info.isDirectory() ? 'directory' : 'file';
}

/** Data files: JSON or CSV, gzipped or not. */
export const DATA_FILE = /\.(json|csv)(\.gz)?$/i;
/** Archives of data files (read entry by entry, import/archive.ts). */
export const ARCHIVE_FILE = /\.(zip|tar|tgz|tar\.gz)$/i;

/** Data files and archives of a directory, recursively, in a stable order. */
export async function listDataFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (current: string) => {
    const entries = await readdir(current, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && (DATA_FILE.test(entry.name) || ARCHIVE_FILE.test(entry.name))) out.push(path);
    }
  };
  await walk(dir);
  return out;
}

export function openFile(path: string): Readable {
  return createReadStream(path, { highWaterMark: 256 * 1024 });
}

export interface HttpValidators {
  etag: string | null;
  lastModified: string | null;
}

export interface HttpResponseInfo {
  notModified: boolean;
  stream: Readable | null;
  validators: HttpValidators;
  /** Call as bytes arrive: keeps the stall timer from firing. */
  onProgress: () => void;
}

const HEADERS_TIMEOUT_MS = 60_000;
const IDLE_TIMEOUT_MS = 120_000;

/**
 * GETs a URL as a stream with conditional headers (an unchanged remote file answers 304 and is not
 * downloaded again). Gives up when no response headers arrive within a minute, or the body stalls
 * for two minutes.
 */
export async function fetchUrl(policy: OutboundPolicy, location: string, previous: HttpValidators | null, signal?: AbortSignal): Promise<HttpResponseInfo> {
  const url = checkUrl(policy, location);
  const controller = new AbortController();
  const abort = () => controller.abort(signal?.reason ?? new Error('aborted'));
  signal?.addEventListener('abort', abort, { once: true });
  let timer = setTimeout(() => controller.abort(new Error(`no response from ${url.host} within ${HEADERS_TIMEOUT_MS / 1000} s`)), HEADERS_TIMEOUT_MS);
  const headers: Record<string, string> = { 'user-agent': 'controlgraph-vulndb', accept: '*/*' };
  if (previous?.etag) headers['if-none-match'] = previous.etag;
  if (previous?.lastModified) headers['if-modified-since'] = previous.lastModified;
  let response: Awaited<ReturnType<typeof outboundFetch>>;
  try {
    // Every redirect is checked by the guard; no deadline for the whole download (a feed is large):
    // the timers here give up on a silent server or a stalled body instead.
    response = await outboundFetch(policy, url, { headers, signal: controller.signal, redirect: 'follow', timeoutMs: 0 });
  } catch (error) {
    clearTimeout(timer);
    signal?.removeEventListener('abort', abort);
    const reason = controller.signal.aborted && !(error instanceof OutboundError) ? controller.signal.reason : error;
    throw new Error(`fetching ${location} failed: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
  clearTimeout(timer);
  const validators = { etag: response.headers.get('etag'), lastModified: response.headers.get('last-modified') };
  if (response.status === 304) {
    signal?.removeEventListener('abort', abort);
    await response.body?.cancel().catch(() => undefined);
    return { notModified: true, stream: null, validators: previous ?? validators, onProgress: () => undefined };
  }
  if (!response.ok || !response.body) {
    signal?.removeEventListener('abort', abort);
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`fetching ${location} failed: HTTP ${response.status}`);
  }
  const stream = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  const resetIdle = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`download of ${location} stalled`)), IDLE_TIMEOUT_MS);
    timer.unref();
  };
  resetIdle();
  stream.once('close', () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', abort);
  });
  return { notModified: false, stream, validators, onProgress: resetIdle };
}
