import type { AppDeps } from '../../deps.js';
import type { Scope } from '../../platform/db/scope.js';
import { badRequest, forbidden } from '../../platform/http/errors.js';
import { PermanentJobError } from '../../platform/jobs/definition.js';
import { connectionCredentials, type AwsCredentialProvider } from './connections/credentials.js';
import { findConnection } from './connections/connection-service.js';
import { notGrantedMessage, ownCredentialsGranted } from './own-credentials.js';
import type { PluginConfig } from './run-plugins.js';
import type { DiscoveryPlugin } from './schemas.js';

/** A plugin input that makes the service read a cloud source, and the connection it names (if any). */
interface Need {
  plugin: DiscoveryPlugin;
  field: string;
  connectionId: string | undefined;
  alternative: string;
}

/**
 * The sources a job reads with cloud credentials: an S3 state (state_uri) and the aws plugin. An
 * uploaded or inline state needs none.
 */
function needs(plugins: DiscoveryPlugin[], config: PluginConfig): Need[] {
  const out: Need[] = [];
  const tf = config['terraform-state'];
  if (plugins.includes('terraform-state') && tf?.state_uri !== undefined) {
    out.push({
      plugin: 'terraform-state',
      field: 'config["terraform-state"].connection_id',
      connectionId: tf.connection_id,
      alternative: ', or give the state itself (config["terraform-state"].state, or a multipart upload to POST /jobs/terraform-state)',
    });
  }
  if (plugins.includes('aws')) out.push({ plugin: 'aws', field: 'config.aws.connection_id', connectionId: config.aws?.connection_id, alternative: '' });
  return out;
}

/** How each plugin reads, as the job's audit entry records it: `connection:<id>` or `service`. */
export type CredentialChoice = Partial<Record<DiscoveryPlugin, string>>;

/**
 * At creation, before anything is queued or sent: a named connection must be one of the job's
 * workspace (400 otherwise); a source without a connection needs the operator's grant of the
 * service's own credentials to this tenant (403 otherwise).
 */
export async function checkJobCredentials(deps: Pick<AppDeps, 'database' | 'config'>, scope: Scope, plugins: DiscoveryPlugin[], config: PluginConfig): Promise<CredentialChoice> {
  const tf = config['terraform-state'];
  if (tf?.connection_id !== undefined && tf.state_uri === undefined) {
    throw badRequest('config["terraform-state"].connection_id is for reading state_uri; a state given inline or uploaded needs no connection');
  }
  const choice: CredentialChoice = {};
  for (const need of needs(plugins, config)) {
    if (need.connectionId !== undefined) {
      if (!(await findConnection(deps.database.db, scope, need.connectionId))) {
        throw badRequest(`${need.field}: no cloud connection ${need.connectionId} in this workspace (GET /api/v1/tenants/${scope.tenantId}/cloud-connections lists them)`);
      }
      choice[need.plugin] = `connection:${need.connectionId}`;
    } else if (await ownCredentialsGranted(deps.database.db, deps.config, scope.tenantId)) {
      choice[need.plugin] = 'service';
    } else {
      throw forbidden(notGrantedMessage(need.field, scope.tenantId, need.alternative));
    }
  }
  return choice;
}

/**
 * The plugins' credentials when the job runs, all resolved before any plugin reads: a connection
 * deleted since, or a grant withdrawn since (or a job queued before grants existed), fails the job
 * before a request leaves the service. A role connection's AssumeRole happens here, so a trust
 * policy that refuses fails the job before any plugin reads. `undefined` means the service's own
 * credentials (granted).
 */
export async function resolveJobCredentials(
  deps: Pick<AppDeps, 'database' | 'config' | 'tokenKey'>,
  scope: Scope,
  jobId: string,
  plugins: DiscoveryPlugin[],
  config: PluginConfig,
): Promise<Partial<Record<DiscoveryPlugin, AwsCredentialProvider>>> {
  const out: Partial<Record<DiscoveryPlugin, AwsCredentialProvider>> = {};
  // Both plugins may name one connection: one role session serves them.
  const byConnection = new Map<string, AwsCredentialProvider>();
  for (const need of needs(plugins, config)) {
    if (need.connectionId === undefined) {
      if (!(await ownCredentialsGranted(deps.database.db, deps.config, scope.tenantId)))
        throw new PermanentJobError(notGrantedMessage(need.field, scope.tenantId, need.alternative));
      continue;
    }
    let provider = byConnection.get(need.connectionId);
    if (!provider) {
      provider = await connectionCredentials(deps, scope, need.connectionId, jobId);
      await provider();
      byConnection.set(need.connectionId, provider);
    }
    out[need.plugin] = provider;
  }
  return out;
}
