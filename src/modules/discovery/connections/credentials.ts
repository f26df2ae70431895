import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { AppDeps } from '../../../deps.js';
import type { Scope } from '../../../platform/db/scope.js';
import { PermanentJobError } from '../../../platform/jobs/definition.js';
import { secretBoxFor, SecretError } from '../../../platform/crypto/secret-box.js';
import { findConnection, sealContext, type AccessKeys } from './connection-service.js';

/** What the AWS SDK clients sign with (an AwsCredentialIdentity). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}
export type AwsCredentialProvider = () => Promise<AwsCredentials>;

/** Role sessions last an hour (every role allows that); they are renewed this long before they end. */
export const ROLE_SESSION_SECONDS = 3600;
const RENEW_BEFORE_MS = 5 * 60_000;

/** STS answers that asking again cannot change: the job fails at once, saying why. */
const PERMANENT = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'MalformedPolicyDocument',
  'PackedPolicyTooLarge',
  'RegionDisabledException',
  'ValidationError',
  'InvalidClientTokenId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'ExpiredTokenException',
]);

interface RoleInput {
  roleArn: string;
  externalId: string;
  sessionName: string;
  connectionName: string;
}

/**
 * Temporary credentials of the tenant's role: STS AssumeRole with the connection's external id,
 * signed with the service's own credentials (that is all they sign). STS's endpoint comes from the
 * service's AWS configuration (AWS_REGION, AWS_ENDPOINT_URL_STS), never from the tenant. One session
 * serves every client of the job and is renewed before it expires.
 */
export function assumeRoleProvider(input: RoleInput): AwsCredentialProvider {
  let session: { credentials: Promise<AwsCredentials>; renewAt: number } | null = null;

  async function assume(): Promise<AwsCredentials> {
    const sts = new STSClient({ region: process.env.AWS_REGION ?? 'us-east-1' });
    try {
      const out = await sts.send(
        new AssumeRoleCommand({ RoleArn: input.roleArn, ExternalId: input.externalId, RoleSessionName: input.sessionName, DurationSeconds: ROLE_SESSION_SECONDS }),
      );
      const c = out.Credentials;
      if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken) throw new PermanentJobError(`STS AssumeRole of ${input.roleArn} answered without credentials`);
      return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
    } catch (error) {
      if (error instanceof PermanentJobError) throw error;
      const name = (error as { name?: string }).name ?? '';
      if (name === 'CredentialsProviderError') {
        throw new PermanentJobError(
          `cannot assume ${input.roleArn}: the service has no AWS identity of its own to call STS with (the operator gives it one: an instance or task role, or the AWS_* variables)`,
        );
      }
      if (PERMANENT.has(name)) {
        const detail = (error as Error).message && (error as Error).message !== name ? ` (${(error as Error).message})` : '';
        throw new PermanentJobError(
          `cannot assume ${input.roleArn} (cloud connection "${input.connectionName}"): ${name}${detail}. ` +
            `The role's trust policy must let the service's AWS principal call sts:AssumeRole with the condition sts:ExternalId = "${input.externalId}"`,
        );
      }
      throw error;
    } finally {
      sts.destroy();
    }
  }

  return () => {
    // Wall time, not the service's clock: the session ends by AWS's clock.
    if (!session || Date.now() >= session.renewAt) {
      const current = { credentials: assume(), renewAt: Number.POSITIVE_INFINITY };
      session = current;
      current.credentials.then(
        (c) => {
          current.renewAt = (c.expiration?.getTime() ?? Date.now() + ROLE_SESSION_SECONDS * 1000) - RENEW_BEFORE_MS;
        },
        () => {
          // A failed call is not cached: the next attempt asks STS again.
          if (session === current) session = null;
        },
      );
    }
    return session.credentials;
  };
}

/**
 * The credentials of a connection of the job's workspace. A connection of another tenant or
 * workspace, or one deleted since the job was created, fails the job before any request.
 */
export async function connectionCredentials(deps: Pick<AppDeps, 'database' | 'tokenKey'>, scope: Scope, connectionId: string, jobId: string): Promise<AwsCredentialProvider> {
  const row = await findConnection(deps.database.db, scope, connectionId);
  if (!row) throw new PermanentJobError(`cloud connection ${connectionId} does not exist in this workspace (deleted since the job was created?)`);
  if (row.auth === 'assume_role') {
    // The session name shows in the tenant's CloudTrail: which job read their account.
    return assumeRoleProvider({ roleArn: row.role_arn!, externalId: row.external_id!, sessionName: `controlgraph-${jobId}`, connectionName: row.name });
  }
  let keys: AccessKeys;
  try {
    keys = (await secretBoxFor(deps)).open<AccessKeys>(row.secrets!, sealContext(row.id));
  } catch (error) {
    if (!(error instanceof SecretError)) throw error;
    throw new PermanentJobError(
      `the access key of cloud connection "${row.name}" cannot be opened (sealed under another CONTROLGRAPH_SECRET, or altered): enter it again with PATCH /cloud-connections/${row.id}`,
    );
  }
  const credentials: AwsCredentials = { accessKeyId: keys.access_key_id, secretAccessKey: keys.secret_access_key };
  return async () => credentials;
}
