import { inTenant } from '../../platform/db/scope.js';
import type { AppDeps } from '../../deps.js';
import { secretBoxFor, SecretError, type SecretPurpose } from '../../platform/crypto/secret-box.js';
import { deriveSecretKey, isLegacySecret, LEGACY_INFO, LEGACY_SALT, openSecret } from './legacy-secret-format.js';
import type { SsoConfigRow } from './tables.js';

/**
 * OIDC client secrets at rest, in the platform's secret box with the tenant id as the context. With
 * CONTROLGRAPH_SECRET set, a copy of the database alone cannot decrypt them. Changing
 * CONTROLGRAPH_SECRET makes stored secrets unreadable: the admin enters them again (GET /sso then
 * reports `client_secret_readable: false`, and /sso/test says so).
 *
 * The purpose is the one the old SSO format used, so its key is the same key: a row still in the old
 * format is opened by legacy-secret-format.ts and stored again in the box's format on first read.
 */
const SSO_SECRETS: SecretPurpose = { salt: LEGACY_SALT, info: LEGACY_INFO };

type Deps = Pick<AppDeps, 'database' | 'tokenKey'>;

export async function sealClientSecret(deps: Pick<AppDeps, 'tokenKey'>, plaintext: string, tenantId: string): Promise<string> {
  return (await secretBoxFor(deps, SSO_SECRETS)).seal(plaintext, tenantId);
}

/** The configuration's client secret, or null when there is none or it was sealed under another key (or altered). */
export async function clientSecretOf(deps: Deps, config: SsoConfigRow): Promise<string | null> {
  const sealed = config.client_secret_enc;
  if (!sealed) return null;
  if (isLegacySecret(sealed)) return migrateLegacy(deps, config, sealed);
  try {
    return (await secretBoxFor(deps, SSO_SECRETS)).open<string>(sealed, config.tenant_id);
  } catch (error) {
    if (error instanceof SecretError) return null;
    throw error;
  }
}

/**
 * Opens an old-format secret and stores it in the box's format, unless the row changed meanwhile
 * (the update matches the old value only). An old secret that does not open stays as it is.
 */
async function migrateLegacy(deps: Deps, config: SsoConfigRow, sealed: string): Promise<string | null> {
  const plaintext = openSecret(deriveSecretKey(await deps.tokenKey()), sealed, config.tenant_id);
  if (plaintext === null) return null;
  await deps.database.db
    .updateTable('sso_configs')
    .set({ client_secret_enc: await sealClientSecret(deps, plaintext, config.tenant_id) })
    .where(inTenant(config.tenant_id))
    .where('client_secret_enc', '=', sealed)
    .execute();
  return plaintext;
}
