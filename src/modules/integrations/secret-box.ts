import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Integration secrets at rest: AES-256-GCM under a key derived (HKDF-SHA256) from the service's
 * token key, i.e. CONTROLGRAPH_SECRET (or the generated secret kept in system_settings when that is
 * not set). The integration id is the additional data, so a sealed value moved to another row does not
 * open. Format: `v1.<key id>.<iv>.<ciphertext+tag>` (base64url); the key id (first bytes of the derived
 * key's SHA-256) tells "sealed under another service secret" from "corrupted".
 *
 * Rotation: changing CONTROLGRAPH_SECRET makes every sealed secret unreadable; deliveries then fail
 * with "secret sealed under another service key" until the secrets are entered again with PUT.
 */
export class SecretBox {
  private readonly key: Buffer;
  readonly keyId: string;

  constructor(serviceKey: Uint8Array) {
    this.key = Buffer.from(hkdfSync('sha256', serviceKey, 'controlgraph/integrations', 'integration secrets v1', 32));
    this.keyId = createHash('sha256').update(this.key).digest('base64url').slice(0, 8);
  }

  seal(value: unknown, integrationId: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(integrationId));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return ['v1', this.keyId, iv.toString('base64url'), body.toString('base64url')].join('.');
  }

  open<T = Record<string, unknown>>(sealed: string, integrationId: string): T {
    const [version, keyId, iv, body] = sealed.split('.');
    if (version !== 'v1' || !keyId || !iv || !body) throw new SecretError('sealed secret has an unknown format');
    if (keyId !== this.keyId) throw new SecretError('secret sealed under another service key (CONTROLGRAPH_SECRET changed): enter it again with PUT');
    const data = Buffer.from(body, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(integrationId));
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

const boxes = new WeakMap<object, Promise<SecretBox>>();

/** One box per dependency set (the key is loaded once). */
export function secretBoxFor(deps: { tokenKey: () => Promise<Uint8Array> }): Promise<SecretBox> {
  let box = boxes.get(deps);
  if (!box) {
    box = deps.tokenKey().then((key) => new SecretBox(key));
    box.catch(() => boxes.delete(deps));
    boxes.set(deps, box);
  }
  return box;
}
