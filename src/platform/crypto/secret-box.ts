import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (integration credentials, TOTP seeds, discovery access keys, SSO client secrets):
 * AES-256-GCM under a key derived (HKDF-SHA256) from the service's token key, i.e. CONTROLGRAPH_SECRET
 * (or the generated secret kept in system_settings when that is not set). The caller's context (the
 * owning row's id, or the tenant id) is the additional data, so a sealed value moved to another row
 * does not open. Format: `v1.<key id>.<iv>.<ciphertext+tag>` (base64url); the key id (first bytes of
 * the derived key's SHA-256) tells "sealed under another service secret" from "corrupted".
 *
 * Each use derives its key under a purpose (HKDF salt and info), so one purpose's secrets never open
 * as another's. The purposes are fixed: changing one makes every secret sealed under it unreadable.
 *
 * Rotation: changing CONTROLGRAPH_SECRET makes every sealed secret unreadable; the owners then report
 * "secret sealed under another service key" until the secrets are entered again.
 */
export interface SecretPurpose {
  salt: string;
  info: string;
}

/**
 * The purpose the integrations introduced; MFA seeds, discovery access keys and tenant mail share it
 * (their contexts are distinct row ids). The strings are the ones it has always had.
 */
export const SHARED_SECRETS: SecretPurpose = { salt: 'controlgraph/integrations', info: 'integration secrets v1' };

export class SecretBox {
  private readonly key: Buffer;
  readonly keyId: string;

  constructor(serviceKey: Uint8Array, purpose: SecretPurpose = SHARED_SECRETS) {
    this.key = Buffer.from(hkdfSync('sha256', serviceKey, purpose.salt, purpose.info, 32));
    this.keyId = createHash('sha256').update(this.key).digest('base64url').slice(0, 8);
  }

  seal(value: unknown, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return ['v1', this.keyId, iv.toString('base64url'), body.toString('base64url')].join('.');
  }

  open<T = Record<string, unknown>>(sealed: string, context: string): T {
    const [version, keyId, iv, body, extra] = sealed.split('.');
    if (version !== 'v1' || !keyId || !iv || !body || extra !== undefined) throw new SecretError('sealed secret has an unknown format');
    if (keyId !== this.keyId) throw new SecretError('secret sealed under another service key (CONTROLGRAPH_SECRET changed): enter it again with PUT');
    const data = Buffer.from(body, 'base64url');
    if (data.length < 16) throw new SecretError('sealed secret does not open (corrupted or moved)');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(data.subarray(data.length - 16));
    try {
      const plain = Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as T;
    } catch {
      throw new SecretError('sealed secret does not open (corrupted or moved)');
    }
  }
}

export class SecretError extends Error {
  override name = 'SecretError';
}

const boxes = new WeakMap<object, Map<SecretPurpose, Promise<SecretBox>>>();

/** One box per dependency set and purpose (the key is loaded once). */
export function secretBoxFor(deps: { tokenKey: () => Promise<Uint8Array> }, purpose: SecretPurpose = SHARED_SECRETS): Promise<SecretBox> {
  let byPurpose = boxes.get(deps);
  if (!byPurpose) boxes.set(deps, (byPurpose = new Map()));
  let box = byPurpose.get(purpose);
  if (!box) {
    box = deps.tokenKey().then((key) => new SecretBox(key, purpose));
    box.catch(() => byPurpose.delete(purpose));
    byPurpose.set(purpose, box);
  }
  return box;
}
