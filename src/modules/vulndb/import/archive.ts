import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract as tarExtract } from 'tar-stream';
import yauzl from 'yauzl';
import type { Config } from '../../../config.js';
import { ByteCounter, DATA_FILE, ExpansionBudget, prepareInput, sniff, type OpenedInput } from './input.js';
import { ImportError } from './parsers.js';

/**
 * Archives of data files: a zip (OSV's per-ecosystem `all.zip`, one advisory per entry; NVD's
 * `nvdcve-2.0-YYYY.json.zip`) or a tar, gzipped or not. Each data entry (`.json`, `.csv`, either
 * gzipped) is read as a file of a directory is: its format detected from its own first bytes, its
 * content streamed. Other entries (directories, README, LICENSE, nested archives, macOS `__MACOSX`
 * resource forks) are skipped.
 *
 * Nothing is held whole in memory and nothing is extracted to disk:
 * - a zip's table of contents is at its end, so it is read from a file: a local file where it is,
 *   anything else (an upload in the artifact store, a download) copied to a temporary file first,
 *   removed afterwards;
 * - a tar is read as it streams.
 *
 * Limits against archive bombs, refused before a record is staged where the archive says so up front:
 * at most `archiveMaxEntries` entries per archive, and at most `uncompressedMaxBytes` of content
 * decompressed in one import (gzip, zip and tar together; counted as it flows as well, so an entry
 * that lies about its size or a gzip inside an entry is caught too). An entry named with an absolute
 * path or a `..` segment refuses the whole archive: entries are never written anywhere, but such an
 * archive is not a data export.
 */
export interface ImportLimits {
  uncompressedMaxBytes: number;
  archiveMaxEntries: number;
}

export const DEFAULT_IMPORT_LIMITS: ImportLimits = { uncompressedMaxBytes: 16 * 1024 ** 3, archiveMaxEntries: 1_000_000 };

export function importLimitsOf(config: Pick<Config, 'vulndbUncompressedMaxBytes' | 'vulndbArchiveMaxEntries'>): ImportLimits {
  return { uncompressedMaxBytes: config.vulndbUncompressedMaxBytes, archiveMaxEntries: config.vulndbArchiveMaxEntries };
}

/** One input as the importer reads it: one data file, or the data entries of an archive. */
export interface Container {
  archive: 'zip' | 'tar' | null;
  /** The data inputs, one after the other: each must be read to its end (or the import stop) before the next. */
  entries(): AsyncGenerator<OpenedInput>;
  /** Raw bytes read so far; the input's size once `entries()` is done. */
  bytes(): number;
  /** SHA-256 of the raw input, once `entries()` is done. */
  digest(): string;
  /** Removes a temporary copy; closes what is open. */
  close(): Promise<void>;
}

export interface ContainerOptions {
  /** The input is this local file: a zip is read in place rather than copied. */
  path?: string;
  onProgress?: () => void;
  budget: ExpansionBudget;
  limits: ImportLimits;
}

const isZip = (head: Buffer) => head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && ((head[2] === 3 && head[3] === 4) || (head[2] === 5 && head[3] === 6));
/** POSIX (ustar) and GNU tar headers say so at byte 257. */
const isTar = (head: Buffer) => head.length >= 262 && head.subarray(257, 262).toString('latin1') === 'ustar';

/** An entry's path as shown in errors: control characters dropped, at most 300 characters. */
function shown(path: string): string {
  const clean = [...path].filter((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) !== 0x7f).join('');
  return clean.length > 300 ? `…${clean.slice(-299)}` : clean;
}

/** Whether an entry is data to import: a .json or .csv (gzipped or not), not a macOS resource fork. */
function isDataEntry(path: string): boolean {
  const parts = path.split('/');
  return DATA_FILE.test(path) && !parts.includes('__MACOSX') && !parts[parts.length - 1]!.startsWith('._');
}

/** Why an entry's path refuses the archive, or null. Backslashes count as separators (Windows zips). */
function unsafePath(path: string): string | null {
  const normal = path.replace(/\\/g, '/');
  if (normal.startsWith('/') || /^[a-zA-Z]:/.test(normal)) return 'an absolute path';
  if (normal.split('/').includes('..')) return 'a ".." path';
  return null;
}

function refuse(archive: string, message: string): ImportError {
  return new ImportError(`${archive}: ${message}; nothing was imported`, 0, 0, archive);
}

function unsafeEntry(archive: string, path: string, why: string): ImportError {
  return refuse(archive, `the entry "${shown(path)}" has ${why} (entries are never written to disk, but such an archive is refused)`);
}

function tooManyEntries(archive: string, limits: ImportLimits): ImportError {
  return refuse(archive, `the archive holds more than ${limits.archiveMaxEntries} entries (CONTROLGRAPH_VULNDB_ARCHIVE_MAX_ENTRIES): refused as a possible zip bomb`);
}

function noData(archive: string): ImportError {
  return refuse(archive, 'the archive holds no .json, .csv or .gz data file');
}

/**
 * Opens an input: sniffs its first bytes and returns a container of its data inputs. A plain file (or
 * gzip) is a container of one.
 */
export async function openContainer(stream: Readable, name: string, options: ContainerOptions): Promise<Container> {
  const peek = await sniff(stream, 4);
  if (isZip(peek.head)) return openZip(peek.replay, name, options);
  const opened = await prepareInput(peek.replay, name, { onProgress: options.onProgress, budget: options.budget });
  if (isTar(opened.headBytes)) return openTar(opened, name, options);
  let done = false;
  return {
    archive: null,
    async *entries() {
      if (done) return;
      done = true;
      yield opened;
    },
    bytes: () => opened.raw.bytes,
    digest: () => opened.raw.digest(),
    async close() {
      if (!opened.stream.readableEnded) opened.stream.destroy();
    },
  };
}

function openZipFile(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    // decodeStrings: names decoded (CP437 or UTF-8) and checked by yauzl (absolute and ".." paths are
    // its errors, rephrased below); validateEntrySizes: an entry yielding more or fewer bytes than its
    // header says fails its stream, so the sizes summed before reading can be trusted.
    yauzl.open(path, { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true, strictFileNames: false }, (error, zip) =>
      error ? reject(error) : resolve(zip),
    ),
  );
}

/** The entries of a zip's table of contents, one at a time. */
async function* zipEntries(zip: yauzl.ZipFile): AsyncGenerator<yauzl.Entry> {
  for (;;) {
    const entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
      const cleanup = () => {
        zip.off('entry', onEntry);
        zip.off('end', onEnd);
        zip.off('error', onError);
      };
      const onEntry = (e: yauzl.Entry) => (cleanup(), resolve(e));
      const onEnd = () => (cleanup(), resolve(null));
      const onError = (error: Error) => (cleanup(), reject(error));
      zip.on('entry', onEntry);
      zip.on('end', onEnd);
      zip.on('error', onError);
      zip.readEntry();
    });
    if (!entry) return;
    yield entry;
  }
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream))));
}

/** yauzl's own refusals of a path, said as ours; anything else: the zip is unreadable. */
function zipError(archive: string, error: unknown): ImportError {
  if (error instanceof ImportError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const path = /^(absolute path|invalid relative path|invalid characters in fileName): (.*)$/s.exec(message);
  if (path) return unsafeEntry(archive, path[2]!, path[1] === 'absolute path' ? 'an absolute path' : path[1] === 'invalid relative path' ? 'a ".." path' : 'a backslash');
  return new ImportError(`${archive} is not a readable zip archive: ${message}`, null, 0, archive);
}

async function openZip(replay: Readable, name: string, options: ContainerOptions): Promise<Container> {
  const { budget, limits } = options;
  // The raw bytes, counted and hashed on their way to the temporary copy (or read once for the hash).
  const raw = new ByteCounter(options.onProgress);
  let tempDir: string | null = null;
  let path = options.path;
  let zip: yauzl.ZipFile | null = null;
  let current: Readable | null = null;
  const close = async () => {
    current?.destroy();
    zip?.close();
    zip = null;
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
    tempDir = null;
  };
  try {
    if (path) {
      replay.destroy();
      await pipeline(createReadStream(path), raw, discard());
    } else {
      tempDir = await mkdtemp(join(tmpdir(), 'controlgraph-vulndb-'));
      path = join(tempDir, 'archive.zip');
      // A copy larger than the content may expand to is refused as it is written.
      const copyLimit = new ByteCounter(undefined, { budget: new ExpansionBudget(limits.uncompressedMaxBytes), name }, false);
      await pipeline(replay, raw, copyLimit, createWriteStream(path));
    }

    // First pass over the table of contents: paths, entry count and declared sizes, before any content.
    const contents = await openZipFile(path).catch((error: unknown) => Promise.reject(zipError(name, error)));
    zip = contents;
    if (contents.entryCount > limits.archiveMaxEntries) throw tooManyEntries(name, limits);
    let declared = 0;
    let data = 0;
    try {
      for await (const entry of zipEntries(contents)) {
        const why = unsafePath(entry.fileName);
        if (why) throw unsafeEntry(name, entry.fileName, why);
        if (entry.fileName.endsWith('/') || !isDataEntry(entry.fileName)) continue;
        if (entry.isEncrypted()) throw refuse(name, `the entry "${shown(entry.fileName)}" is encrypted`);
        declared += entry.uncompressedSize;
        data++;
      }
    } catch (error) {
      throw zipError(name, error);
    }
    contents.close();
    zip = null;
    if (data === 0) throw noData(name);
    if (declared > budget.left) {
      throw refuse(name, `its entries expand to ${declared} bytes, more than ${budget.maxBytes} (CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES): refused as a possible zip bomb`);
    }
  } catch (error) {
    await close();
    throw error;
  }
  const zipPath = path;
  return {
    archive: 'zip',
    async *entries() {
      const reading = await openZipFile(zipPath).catch((error: unknown) => Promise.reject(zipError(name, error)));
      zip = reading;
      const entries = zipEntries(reading);
      for (;;) {
        let entry: yauzl.Entry | undefined;
        try {
          entry = (await entries.next()).value as yauzl.Entry | undefined;
        } catch (error) {
          throw zipError(name, error);
        }
        if (!entry) return;
        if (entry.fileName.endsWith('/') || !isDataEntry(entry.fileName)) continue;
        let stream: Readable;
        try {
          stream = await openEntry(reading, entry);
        } catch (error) {
          throw new ImportError(`${name}/${shown(entry.fileName)}: ${error instanceof Error ? error.message : String(error)}`, null, null, `${name}/${shown(entry.fileName)}`);
        }
        current = stream;
        yield await prepareInput(stream, `${name}/${shown(entry.fileName)}`, { budget, archived: true });
        current = null;
      }
    },
    bytes: () => raw.bytes,
    digest: () => raw.digest(),
    close,
  };
}

/** A sink for bytes that only needed counting. */
function discard(): Writable {
  return new Writable({ write: (_chunk, _encoding, callback) => callback() });
}

function openTar(opened: OpenedInput, name: string, options: ContainerOptions): Container {
  const { budget, limits } = options;
  // The entries' content counts against the budget, not the tar stream around it as well.
  if (opened.decoded.budget) {
    opened.decoded.budget = null;
    options.budget.used -= opened.decoded.bytes;
  }
  const extract = tarExtract();
  let failure: Error | null = null;
  let current: Readable | null = null;
  opened.stream.on('error', (error) => extract.destroy(error));
  extract.on('error', (error: Error) => (failure ??= error));
  opened.stream.pipe(extract as unknown as NodeJS.WritableStream);
  const tarError = (error: unknown) =>
    error instanceof ImportError ? error : new ImportError(`${name} is not a readable tar archive: ${error instanceof Error ? error.message : String(error)}`, null, null, name);
  return {
    archive: 'tar',
    async *entries() {
      let count = 0;
      let declared = 0;
      let data = 0;
      const iterator = extract[Symbol.asyncIterator]();
      for (;;) {
        let next: Awaited<ReturnType<typeof iterator.next>>;
        try {
          next = await iterator.next();
        } catch (error) {
          throw tarError(failure ?? error);
        }
        if (next.done) break;
        const entry = next.value;
        const { header } = entry;
        if (++count > limits.archiveMaxEntries) throw tooManyEntries(name, limits);
        const why = unsafePath(header.name);
        if (why) throw unsafeEntry(name, header.name, why);
        if ((header.type !== 'file' && header.type !== 'contiguous-file') || !isDataEntry(header.name)) {
          entry.resume();
          continue;
        }
        // A tar states each entry's exact size: a bomb is refused before its content is read.
        declared += header.size;
        if (declared > budget.maxBytes) {
          throw refuse(name, `its entries expand to more than ${budget.maxBytes} bytes (CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES): refused as a possible zip bomb`);
        }
        data++;
        const stream = Readable.from(entry as AsyncIterable<Buffer>, { objectMode: false });
        current = stream;
        yield await prepareInput(stream, `${name}/${shown(header.name)}`, { budget, archived: true });
        current = null;
      }
      if (failure) throw tarError(failure);
      if (data === 0) throw noData(name);
    },
    bytes: () => opened.raw.bytes,
    digest: () => opened.raw.digest(),
    async close() {
      current?.destroy();
      extract.destroy();
      if (!opened.stream.readableEnded) opened.stream.destroy();
    },
  };
}
