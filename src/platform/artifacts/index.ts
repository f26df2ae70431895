import { fileURLToPath } from 'node:url';
import type { ArtifactStore } from './store.js';
import { FileArtifactStore } from './file-store.js';
import { parseS3Url, S3ArtifactStore } from './s3-store.js';

export type { ArtifactStore } from './store.js';

/** `file://<dir>`, `s3://bucket?endpoint=…&region=…`, or `none` (null: artifact endpoints answer 503). */
export function openArtifactStore(url: string): ArtifactStore | null {
  if (url === 'none') return null;
  if (url.startsWith('file://')) {
    // file://./data/artifacts is relative to the working directory; file:///abs/path is absolute.
    const path = url.startsWith('file:///') ? fileURLToPath(url) : url.slice('file://'.length);
    return new FileArtifactStore(path);
  }
  if (url.startsWith('s3://')) return new S3ArtifactStore(parseS3Url(url));
  throw new Error(`ARTIFACT_STORE must be file://<dir>, s3://<bucket>?… or none (got "${url}")`);
}
