import { createHmac } from 'node:crypto';

/**
 * The signature headers of a webhook delivery, two schemes over the same body:
 *
 * - ControlGraph's own (the spec's): `X-ControlGraph-Signature: sha256=<hex HMAC-SHA256 of
 *   "<timestamp>.<raw body>">` keyed with the secret's UTF-8 bytes, `X-ControlGraph-Timestamp` (Unix
 *   seconds), `X-ControlGraph-Event`, and `X-ControlGraph-Delivery` / `Idempotency-Key` (the delivery
 *   id, the same on every retry: receivers drop duplicates by it).
 * - Standard Webhooks (standardwebhooks.com): `webhook-id` (the delivery id), `webhook-timestamp`,
 *   `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`. The key is the secret's
 *   base64 payload when the secret looks like `whsec_<base64>` (what the standard libraries expect),
 *   otherwise its UTF-8 bytes (pass `{format: 'raw'}` to those libraries).
 */
export interface SignInput {
  secret: string;
  deliveryId: string;
  eventType: string;
  body: string;
  now: Date;
}

const WHSEC = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/** The HMAC key of the Standard Webhooks signature for a secret. */
export function standardWebhooksKey(secret: string): Buffer {
  const match = WHSEC.exec(secret);
  if (match) {
    const decoded = Buffer.from(match[1]!, 'base64');
    if (decoded.length > 0) return decoded;
  }
  return Buffer.from(secret, 'utf8');
}

export function controlGraphSignature(secret: string, timestamp: number | string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.`).update(body).digest('hex')}`;
}

export function standardWebhooksSignature(secret: string, id: string, timestamp: number | string, body: string | Buffer): string {
  return `v1,${createHmac('sha256', standardWebhooksKey(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
}

export function signatureHeaders(input: SignInput): Record<string, string> {
  const timestamp = Math.floor(input.now.getTime() / 1000);
  return {
    'X-ControlGraph-Signature': controlGraphSignature(input.secret, timestamp, input.body),
    'X-ControlGraph-Timestamp': String(timestamp),
    'X-ControlGraph-Event': input.eventType,
    'X-ControlGraph-Delivery': input.deliveryId,
    'Idempotency-Key': input.deliveryId,
    'webhook-id': input.deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardWebhooksSignature(input.secret, input.deliveryId, timestamp, input.body),
  };
}
