import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { assertSafeKey, type ArtifactInfo, type ArtifactStore, type PutOptions, type PutResult } from './store.js';
import { MeteringStream } from './metering.js';

export interface S3Location {
  bucket: string;
  endpoint?: string;
  region: string;
  /** Path-style addressing is needed by most S3-compatible servers (MinIO, s3rver). */
  forcePathStyle: boolean;
  prefix: string;
}

/** Parses `s3://bucket[/prefix]?endpoint=…&region=…`; credentials come from the usual AWS variables. */
export function parseS3Url(url: string): S3Location {
  const parsed = new URL(url);
  const endpoint = parsed.searchParams.get('endpoint') ?? undefined;
  return {
    bucket: parsed.hostname,
    endpoint,
    region: parsed.searchParams.get('region') ?? process.env.AWS_REGION ?? 'us-east-1',
    forcePathStyle: parsed.searchParams.get('path_style') !== 'false' && endpoint !== undefined,
    prefix: parsed.pathname.replace(/^\/+|\/+$/g, ''),
  };
}

export class S3ArtifactStore implements ArtifactStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;

  constructor(
    private readonly location: S3Location,
    client?: S3Client,
  ) {
    this.client = client ?? new S3Client({ region: location.region, endpoint: location.endpoint, forcePathStyle: location.forcePathStyle });
  }

  private objectKey(key: string): string {
    assertSafeKey(key);
    return this.location.prefix ? `${this.location.prefix}/${key}` : key;
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    const meter = new MeteringStream(options.maxBytes);
    // Upload streams in parts (multipart above 5 MiB), so the size need not be known in advance.
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.location.bucket,
        Key: this.objectKey(key),
        Body: body.pipe(meter),
        ContentType: options.contentType,
      },
      queueSize: 2,
    });
    body.on('error', (error) => meter.destroy(error));
    await upload.done();
    return { key, size: meter.bytes, sha256: meter.digest() };
  }

  async get(key: string): Promise<Readable | null> {
    try {
      const result = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key) }));
      return result.Body as Readable;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async stat(key: string): Promise<ArtifactInfo | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key) }));
      return { key, size: head.ContentLength ?? 0, contentType: head.ContentType ?? null };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key) }));
  }

  /**
   * Nothing to do here: an object appears only once its upload completes, and the parts of a
   * multipart upload whose process died are removed by the bucket's lifecycle rule
   * (AbortIncompleteMultipartUpload, see docs/deployment.md).
   */
  async sweepAbandoned(): Promise<number> {
    return 0;
  }

  async check(): Promise<boolean> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket }));
      return true;
    } catch {
      return false;
    }
  }
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
