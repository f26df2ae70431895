import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * The format SSO client secrets were stored in before the one secret box (issue 26): `v1.` +
 * base64url(iv[12] | tag[16] | ciphertext), AES-256-GCM, the tenant id as the associated data. Only
 * read now: client-secret.ts opens a secret in this format and stores it again in the secret box's
 * format (`v1.<key id>.<iv>.<ciphertext+tag>`, four parts where this has two). Delete this file once
 * no sso_configs row holds a two-part secret. `sealSecret` stays for the tests that prove old rows
 * still open; the service no longer writes this format.
 */
const VERSION = 'v1';
/** The key's HKDF purpose; the secret box under SSO_SECRETS derives the same key. */
export const LEGACY_SALT = 'controlgraph/sso';
export const LEGACY_INFO = 'oidc-client-secret/v1';

export function deriveSecretKey(tokenKey: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', tokenKey, LEGACY_SALT, LEGACY_INFO, 32));
}

/** Whether a stored secret is in this (old) format: `v1.` and one base64url part. */
export function isLegacySecret(box: string): boolean {
  const parts = box.split('.');
  return parts.length === 2 && parts[0] === VERSION;
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
