import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * OIDC client secrets at rest: AES-256-GCM under a key derived (HKDF-SHA256) from the service's
 * token-signing key, i.e. CONTROLGRAPH_SECRET, or the random secret kept in system_settings when
 * that is unset. With CONTROLGRAPH_SECRET set, a copy of the database alone cannot decrypt them.
 * The tenant id is the associated data, so a ciphertext copied to another tenant's row does not
 * decrypt. Changing CONTROLGRAPH_SECRET makes stored secrets unreadable: the admin enters them again
 * (GET /sso then reports `client_secret_readable: false`, and /sso/test says so).
 *
 * Format: `v1.` + base64url(iv[12] | tag[16] | ciphertext).
 */
const VERSION = 'v1';
const SALT = Buffer.from('controlgraph/sso');
const INFO = Buffer.from('oidc-client-secret/v1');

export function deriveSecretKey(tokenKey: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', tokenKey, SALT, INFO, 32));
}

export function sealSecret(key: Buffer, plaintext: string, tenantId: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(tenantId));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
}

/** The plaintext, or null when the box was sealed under another key (or altered). */
export function openSecret(key: Buffer, box: string, tenantId: string): string | null {
  const [version, body] = box.split('.');
  if (version !== VERSION || !body) return null;
  const raw = Buffer.from(body, 'base64url');
  if (raw.length < 29) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(tenantId));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
