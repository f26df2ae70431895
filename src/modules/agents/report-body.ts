import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { badRequest, payloadTooLarge } from '../../platform/http/errors.js';

/**
 * Reads a report body: gzip-compressed JSON (`Content-Encoding: gzip`; plain JSON is accepted too, for
 * curl and debugging). Both the compressed and the decompressed size are limited while streaming: the
 * decompressor is destroyed as soon as its output passes the limit, so a gzip bomb (1 GiB of zeros is
 * 1 MiB compressed) costs at most the limit in memory and never its full size.
 */
export interface BodyLimits {
  /** Bytes on the wire. */
  compressed: number;
  /** Bytes of JSON after decompression. */
  decompressed: number;
}

export const DEFAULT_LIMITS: BodyLimits = { compressed: 8 * 1024 * 1024, decompressed: 32 * 1024 * 1024 };

export interface ParsedBody {
  value: unknown;
  compressedBytes: number;
  rawBytes: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Sizes of the report body, set by the report parser. */
    agentReportSizes?: { compressed: number; raw: number };
  }
}

const mib = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;

export function readReportBody(request: FastifyRequest, payload: Readable, limits: BodyLimits): Promise<ParsedBody> {
  const encoding = String(request.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (!['gzip', 'x-gzip', 'identity', ''].includes(encoding)) {
    payload.resume();
    return Promise.reject(badRequest(`unsupported Content-Encoding "${encoding}": send the report gzip-compressed (Content-Encoding: gzip)`));
  }
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.compressed) {
    payload.resume();
    return Promise.reject(payloadTooLarge(`report body of ${declared} bytes exceeds the limit of ${mib(limits.compressed)} compressed`, { limit_bytes: limits.compressed }));
  }
  const gzipped = encoding === 'gzip' || encoding === 'x-gzip';
  return new Promise<ParsedBody>((resolve, reject) => {
    let compressed = 0;
    let raw = 0;
    let settled = false;
    const chunks: Buffer[] = [];
    const gunzip = gzipped ? createGunzip({ chunkSize: 64 * 1024 }) : null;

    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      payload.unpipe();
      gunzip?.destroy();
      // Drain what the client still sends so the error response goes out on a sane connection.
      payload.resume();
      reject(error);
    };
    const onRaw = (chunk: Buffer) => {
      if (settled) return;
      raw += chunk.length;
      if (raw > limits.decompressed) {
        fail(payloadTooLarge(`report exceeds the limit of ${mib(limits.decompressed)} decompressed`, { limit_bytes: limits.decompressed }));
        return;
      }
      chunks.push(chunk);
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      const text = Buffer.concat(chunks, raw).toString('utf8');
      chunks.length = 0;
      if (text.trim() === '') return reject(badRequest('the report body is empty'));
      try {
        resolve({ value: JSON.parse(text), compressedBytes: compressed, rawBytes: raw });
      } catch (error) {
        reject(badRequest(`the report is not valid JSON: ${(error as Error).message}`));
      }
    };

    payload.on('data', (chunk: Buffer) => {
      if (settled) return;
      compressed += chunk.length;
      if (compressed > limits.compressed) {
        fail(payloadTooLarge(`report body exceeds the limit of ${mib(limits.compressed)} compressed`, { limit_bytes: limits.compressed }));
      }
    });
    payload.on('error', (error) => fail(badRequest(`the report body could not be read: ${error.message}`)));
    if (gunzip) {
      gunzip.on('data', onRaw);
      gunzip.on('error', (error) => fail(badRequest(`the report is not valid gzip: ${error.message}`)));
      gunzip.on('end', finish);
      payload.pipe(gunzip);
    } else {
      payload.on('data', onRaw);
      payload.on('end', finish);
    }
  });
}
