import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { ArtifactTooLargeError } from './store.js';

/** Counts and hashes bytes as they pass, and stops the stream once it exceeds maxBytes. */
export class MeteringStream extends Transform {
  // Not named "size": the S3 uploader reads Body.size as the total length of a stream.
  bytes = 0;
  private readonly hash = createHash('sha256');

  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      callback(new ArtifactTooLargeError(this.maxBytes));
      return;
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
