import type { Readable } from 'node:stream';

/**
 * Drains what is left of a multipart file part so the parser can reach the end of the request (after
 * the part was refused, e.g. too large). Resolves on end, close or error: a broken upload is dropped
 * by the caller's own error, not by this.
 */
export async function discardPart(stream: Readable): Promise<void> {
  stream.resume();
  await new Promise<void>((resolve) => {
    if (stream.readableEnded || stream.destroyed) return resolve();
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
}
