import { Transform, type TransformCallback } from 'node:stream';
import { lookupTable } from '../../platform/lookup-table.js';

/**
 * What an uploaded file's declared content type and first bytes must look like for its extension.
 * The extension is what a question's accepted_types lists; the declared type must agree with it
 * (or be the generic application/octet-stream many clients send), and for binary formats with a
 * signature the content must start with it, so a renamed executable is not accepted as a ".pdf".
 */

interface FileType {
  contentTypes: string[];
  /** Accepted leading byte sequences (any of them). */
  signatures?: Buffer[];
}

const ZIP = [Buffer.from('PK\x03\x04', 'latin1'), Buffer.from('PK\x05\x06', 'latin1')];
const OLE = [Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])];

export const FILE_TYPES: Record<string, FileType> = lookupTable({
  '.pdf': { contentTypes: ['application/pdf'], signatures: [Buffer.from('%PDF-', 'latin1')] },
  '.docx': { contentTypes: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'], signatures: ZIP },
  '.xlsx': { contentTypes: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'], signatures: ZIP },
  '.pptx': { contentTypes: ['application/vnd.openxmlformats-officedocument.presentationml.presentation'], signatures: ZIP },
  '.odt': { contentTypes: ['application/vnd.oasis.opendocument.text'], signatures: ZIP },
  '.ods': { contentTypes: ['application/vnd.oasis.opendocument.spreadsheet'], signatures: ZIP },
  '.zip': { contentTypes: ['application/zip', 'application/x-zip-compressed'], signatures: ZIP },
  '.doc': { contentTypes: ['application/msword'], signatures: OLE },
  '.xls': { contentTypes: ['application/vnd.ms-excel'], signatures: OLE },
  '.png': { contentTypes: ['image/png'], signatures: [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])] },
  '.jpg': { contentTypes: ['image/jpeg', 'image/pjpeg'], signatures: [Buffer.from([0xff, 0xd8, 0xff])] },
  '.jpeg': { contentTypes: ['image/jpeg', 'image/pjpeg'], signatures: [Buffer.from([0xff, 0xd8, 0xff])] },
  '.gif': { contentTypes: ['image/gif'], signatures: [Buffer.from('GIF87a', 'latin1'), Buffer.from('GIF89a', 'latin1')] },
  '.csv': { contentTypes: ['text/csv', 'text/plain', 'application/csv', 'application/vnd.ms-excel'] },
  '.txt': { contentTypes: ['text/plain'] },
  '.md': { contentTypes: ['text/markdown', 'text/plain'] },
  '.json': { contentTypes: ['application/json', 'text/plain'] },
  '.xml': { contentTypes: ['application/xml', 'text/xml'] },
});

const GENERIC = new Set(['application/octet-stream', 'binary/octet-stream', '']);

export function extensionOf(filename: string): string {
  const i = filename.lastIndexOf('.');
  return i > 0 && i < filename.length - 1 ? filename.slice(i).toLowerCase() : '';
}

/** The content type to record for a file: the declared one when specific, else the extension's own. */
export function checkContentType(extension: string, declared: string | undefined): { ok: true; contentType: string } | { ok: false } {
  const type = (declared ?? '').split(';')[0]!.trim().toLowerCase();
  const known = FILE_TYPES[extension];
  if (GENERIC.has(type)) return { ok: true, contentType: known?.contentTypes[0] ?? 'application/octet-stream' };
  if (!known || known.contentTypes.includes(type)) return { ok: true, contentType: type };
  return { ok: false };
}

export class SignatureMismatchError extends Error {
  override name = 'SignatureMismatchError';
}

/** Passes bytes through, failing as soon as the first bytes show the content is not of the extension's format. */
export class SignatureCheck extends Transform {
  private head: Buffer = Buffer.alloc(0);
  private decided = false;
  private readonly signatures: Buffer[];
  private readonly needed: number;

  constructor(private readonly extension: string) {
    super();
    this.signatures = FILE_TYPES[extension]?.signatures ?? [];
    this.needed = Math.max(0, ...this.signatures.map((s) => s.length));
    this.decided = this.signatures.length === 0;
  }

  private verdict(): Error | null {
    this.decided = true;
    return this.signatures.some((s) => this.head.subarray(0, s.length).equals(s)) ? null : new SignatureMismatchError(`the file's content is not a ${this.extension} file`);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (!this.decided) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, this.needed - this.head.length)]);
      if (this.head.length >= this.needed || this.signatures.some((s) => this.head.length >= s.length && this.head.subarray(0, s.length).equals(s))) {
        const error = this.verdict();
        if (error) return callback(error);
      }
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.decided ? null : this.verdict());
  }
}
