import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { PermanentJobError } from '../../platform/jobs/definition.js';
import type { AwsCredentialProvider } from './connections/credentials.js';

export interface StateReadOptions {
  /** The tenant's connection; absent only for a tenant granted the service's own credentials. */
  credentials?: AwsCredentialProvider;
  /** A larger state is refused (it is parsed whole, as Terraform itself does): CONTROLGRAPH_DISCOVERY_STATE_MAX_BYTES. */
  maxBytes: number;
}

/** Errors that reading again cannot fix: the job fails at once instead of retrying. */
const PERMANENT = new Set(['NoSuchKey', 'NoSuchBucket', 'AccessDenied', 'InvalidBucketName', 'NotFound', 'Forbidden', 'InvalidAccessKeyId', 'SignatureDoesNotMatch']);

export function parseStateUri(uri: string): { bucket: string; key: string } {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!match) throw new PermanentJobError(`state_uri must be s3://bucket/key (got "${uri}")`);
  return { bucket: match[1]!, key: match[2]! };
}

/**
 * Reads a Terraform state kept in S3 (the S3 backend) with the tenant's connection (or, for a granted
 * tenant, the service's own credentials) and the service's endpoint settings (the AWS SDK's
 * environment: AWS_REGION, AWS_ENDPOINT_URL_S3, …). The host is never taken from the request, so a
 * job cannot make the service call an address of the client's choosing.
 */
export async function readStateFromS3(uri: string, options: StateReadOptions, signal?: AbortSignal): Promise<string> {
  const { bucket, key } = parseStateUri(uri);
  const max = options.maxBytes;
  const client = new S3Client({
    region: process.env.AWS_REGION ?? 'us-east-1',
    // A tenant's state bucket may live in another region than the service.
    followRegionRedirects: true,
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
  try {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal });
    if (out.ContentLength !== undefined && out.ContentLength > max) {
      throw new PermanentJobError(`the state ${uri} is ${out.ContentLength} bytes; at most ${max} are read (CONTROLGRAPH_DISCOVERY_STATE_MAX_BYTES)`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of out.Body as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > max) throw new PermanentJobError(`the state ${uri} is larger than ${max} bytes (CONTROLGRAPH_DISCOVERY_STATE_MAX_BYTES)`);
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch (error) {
    if (error instanceof PermanentJobError) throw error;
    const name = (error as { name?: string }).name ?? '';
    if (PERMANENT.has(name))
      throw new PermanentJobError(`cannot read the state ${uri}: ${name}${(error as Error).message && (error as Error).message !== name ? ` (${(error as Error).message})` : ''}`);
    throw error;
  } finally {
    client.destroy();
  }
}
