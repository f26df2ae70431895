import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Database } from '../../platform/db/schema.js';

/** The setting that grants tenants the service's own cloud credentials (README, docs/exports.md). */
export const OWN_CREDENTIALS_SETTING = 'CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS';

/**
 * Whether the operator granted this tenant discovery with the service's own cloud credentials
 * (its AWS environment: instance role, AWS_* variables, profile). Without a grant, a tenant naming
 * an S3 object or running the aws plugin would make the service read with credentials the tenant
 * does not hold: the confused deputy. A slug grant follows the slug (see docs/exports.md).
 */
export async function ownCredentialsGranted(db: Kysely<Database>, config: Pick<Config, 'discoveryOwnCredentialsTenants'>, tenantId: string): Promise<boolean> {
  const grants = config.discoveryOwnCredentialsTenants;
  if (grants.length === 0) return false;
  if (grants.includes(tenantId.toLowerCase())) return true;
  const tenant = await db.selectFrom('tenants').select('slug').where('id', '=', tenantId).executeTakeFirst();
  return tenant !== undefined && grants.includes(tenant.slug.toLowerCase());
}

/** Why a source without a connection is refused, and what to do instead, in the tenant's terms. */
export function notGrantedMessage(field: string, tenantId: string, alternative = ''): string {
  return (
    `${field} is needed: this tenant's discovery may not use the service's own cloud credentials ` +
    `(the operator grants them per tenant with ${OWN_CREDENTIALS_SETTING}). Create a cloud connection ` +
    `(POST /api/v1/tenants/${tenantId}/cloud-connections: an IAM role the service assumes with an external id, or an access key) ` +
    `and name it in ${field}${alternative}`
  );
}
