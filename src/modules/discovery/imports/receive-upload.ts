import { randomUUID } from 'node:crypto';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import type { Multipart } from '@fastify/multipart';
import type { ArtifactStore } from '../../../platform/artifacts/index.js';
import { ArtifactTooLargeError } from '../../../platform/artifacts/store.js';
import { AppError, badRequest, payloadTooLarge } from '../../../platform/http/errors.js';
import { discardPart } from '../../../platform/http/multipart.js';
import { IMPORT_FORMATS, MalformedImportError, type ImportFormat } from './import-record.js';
import { DETECT_HEAD_BYTES, detectFormat, parserFor, supportedFormats } from './parsers.js';

/**
 * POST /imports' upload: the file part streamed (gunzipped when it starts with the gzip magic bytes)
 * into the artifact store within the size limit, its format named or detected, and the whole file
 * parsed once to refuse a malformed one (400 naming the byte offset) before anything is queued.
 * Memory stays constant whatever the file's size.
 */

export interface ReceivedImport {
  format: ImportFormat;
  fileName: string;
  key: string;
  size: number;
}

const GZIP = [0x1f, 0x8b];

/** The bytes of `source`, gunzipped when they are gzip. */
async function* unpacked(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) return;
  async function* all() {
    yield first.value as Buffer;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value as Buffer;
  }
  const head = first.value as Buffer;
  if (head[0] !== GZIP[0] || head[1] !== GZIP[1]) {
    yield* all();
    return;
  }
  const gunzip = createGunzip();
  pipeline(Readable.from(all()), gunzip, () => undefined);
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
  } catch (error) {
    throw badRequest(`the file starts as gzip but does not unpack: ${(error as Error).message}`);
  }
}

function checkFormat(value: string): ImportFormat {
  if (!(IMPORT_FORMATS as readonly string[]).includes(value)) throw badRequest(`unknown format "${value}" (formats: ${IMPORT_FORMATS.join(', ')})`);
  const format = value as ImportFormat;
  if (!parserFor(format)) throw badRequest(`format "${format}" is not supported by this build (supported: ${supportedFormats().join(', ')})`);
  return format;
}

async function readHead(store: ArtifactStore, key: string): Promise<string> {
  const stream = await store.get(key);
  if (!stream) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= DETECT_HEAD_BYTES) break;
  }
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, DETECT_HEAD_BYTES).toString('utf8');
}

/** Reads the whole stored file with the format's parser: a malformed file is a 400 naming the offset. */
async function validate(store: ArtifactStore, key: string, format: ImportFormat): Promise<void> {
  const stream = await store.get(key);
  if (!stream) throw new Error(`uploaded import ${key} vanished from the artifact store`);
  try {
    for await (const _ of parserFor(format)!.parse(stream)) void _;
  } catch (error) {
    if (error instanceof MalformedImportError) throw badRequest(error.message, { offset: error.offset, format });
    throw error;
  }
}

async function storeFile(store: ArtifactStore, key: string, part: Multipart & { type: 'file' }, max: number): Promise<number> {
  const tooLarge = () => payloadTooLarge(`the file exceeds ${max} bytes (CONTROLGRAPH_IMPORT_MAX_BYTES)`, { max_bytes: max });
  try {
    const put = await store.put(key, Readable.from(unpacked(part.file as AsyncIterable<Buffer>)), { maxBytes: max, contentType: 'application/octet-stream' });
    if (part.file.truncated) throw tooLarge();
    return put.size;
  } catch (error) {
    // The rest of the part is read and dropped, so the response can be sent.
    await discardPart(part.file);
    await store.delete(key);
    if (error instanceof ArtifactTooLargeError) throw tooLarge();
    throw error;
  }
}

/** The upload's format field and file part, stored and checked; the caller creates the import. */
export async function receiveImport(request: FastifyRequest, store: ArtifactStore, tenantId: string, max: number): Promise<ReceivedImport> {
  let format: ImportFormat | null = null;
  let received: { key: string; size: number; fileName: string } | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.fieldname !== 'format') throw badRequest(`unknown form field "${part.fieldname}" (fields: format, and the file part file)`);
        if (received) throw badRequest('the format field must come before the file part');
        format = checkFormat(String(part.value));
        continue;
      }
      if (part.fieldname !== 'file' || received) {
        await discardPart(part.file);
        throw badRequest(part.fieldname === 'file' ? 'one file per import' : `unknown file part "${part.fieldname}": the scanner output goes in the part named file`);
      }
      const key = `tenants/${tenantId}/imports/${randomUUID()}`;
      received = { key, size: await storeFile(store, key, part, max), fileName: (part.filename || 'upload').slice(0, 255) };
    }
  } catch (error) {
    if (received) await store.delete(received.key);
    // The multipart parser's own limits (parts, fields, field size) carry a 413.
    if (!(error instanceof AppError) && (error as { statusCode?: number }).statusCode === 413)
      throw payloadTooLarge('upload exceeds the multipart limits (one file, the format field)');
    throw error;
  }
  if (!received) throw badRequest('no file in the upload (multipart file part "file")');
  try {
    format ??= detectFormat(await readHead(store, received.key));
    if (!format) throw badRequest(`the file's format was not recognised: name it in the format field (formats: ${supportedFormats().join(', ')})`);
    await validate(store, received.key, format);
  } catch (error) {
    await store.delete(received.key);
    throw error;
  }
  return { format, fileName: received.fileName, key: received.key, size: received.size };
}
