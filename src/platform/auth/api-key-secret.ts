import { createHash, randomBytes } from 'node:crypto';

/**
 * API keys are `cg_` + 40 base62 characters: the prefix lets secret scanners recognise a leaked key.
 * Only the SHA-256 of a key is stored (keys are random, so a fast hash is enough).
 */
export const API_KEY_PREFIX = 'cg_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function generateApiKey(): string {
  return generateSecretToken(API_KEY_PREFIX);
}

/** A random credential: the prefix and 40 base62 characters (about 238 bits); store only hashSecret() of it. */
export function generateSecretToken(prefix: string): string {
  const bytes = randomBytes(40);
  let body = '';
  for (const byte of bytes) body += ALPHABET[byte % 62];
  return prefix + body;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith(API_KEY_PREFIX);
}
