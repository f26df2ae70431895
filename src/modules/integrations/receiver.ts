import { timingSafeEqual } from 'node:crypto';
import { controlGraphSignature, standardWebhooksSignature } from './signing.js';

/**
 * Verifying a ControlGraph webhook on the receiving side. It needs only node:crypto and signing.ts,
 * so a receiver can copy the two files.
 *
 * ```ts
 * import { verifyWebhook } from './receiver.js';
 * app.post('/hooks/controlgraph', { config: { rawBody: true } }, (req, reply) => {
 *   try {
 *     const event = verifyWebhook({ secret: process.env.CG_SECRET!, headers: req.headers, rawBody: req.rawBody });
 *     // event.id, event.type, event.data …; X-ControlGraph-Delivery is the idempotency id
 *   } catch (error) {
 *     return reply.code(400).send(); // WebhookVerificationError: bad signature, stale timestamp, …
 *   }
 * });
 * ```
 *
 * Verify over the raw bytes received, before any JSON parsing; a re-serialised body does not match.
 * The ControlGraph headers are checked when present, else the Standard Webhooks headers. Signatures
 * are compared in constant time, and a timestamp further than `toleranceSeconds` (300 by default)
 * from the receiver's clock is refused, which bounds replays.
 */
export interface VerifyWebhookInput {
  secret: string;
  /** Incoming headers: Node's IncomingHttpHeaders, a plain record (any case), or a fetch Headers. */
  headers: Record<string, string | string[] | undefined> | { get(name: string): string | null };
  rawBody: string | Uint8Array;
  toleranceSeconds?: number;
  now?: Date;
}

export interface VerifiedWebhook<T = Record<string, unknown>> {
  id: string;
  type: string;
  tenant_id: string;
  workspace_id?: string | null;
  timestamp: string;
  data: T;
  /** The delivery id (idempotency id): the same on every retry of one delivery. */
  delivery_id: string | null;
}

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

function header(headers: VerifyWebhookInput['headers'], name: string): string | null {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name);
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

function equal(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  // Lengths are not secret (every valid signature has the same length); contents are compared in constant time.
  return left.length === right.length && timingSafeEqual(left, right);
}

export function verifyWebhook<T = Record<string, unknown>>(input: VerifyWebhookInput): VerifiedWebhook<T> {
  const tolerance = input.toleranceSeconds ?? 300;
  const now = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const body = typeof input.rawBody === 'string' ? Buffer.from(input.rawBody, 'utf8') : Buffer.from(input.rawBody);
  if (!input.secret) throw new WebhookVerificationError('no secret given');

  const own = header(input.headers, 'x-controlgraph-signature');
  const standard = header(input.headers, 'webhook-signature');
  const id = header(input.headers, 'webhook-id');
  let timestampText: string | null;
  if (own !== null) {
    timestampText = header(input.headers, 'x-controlgraph-timestamp');
  } else if (standard !== null) {
    timestampText = header(input.headers, 'webhook-timestamp');
    if (!id) throw new WebhookVerificationError('missing webhook-id header');
  } else {
    throw new WebhookVerificationError('missing signature header');
  }
  if (!timestampText || !/^\d{1,12}$/.test(timestampText)) throw new WebhookVerificationError('missing or invalid timestamp header');
  const timestamp = Number(timestampText);
  if (Math.abs(now - timestamp) > tolerance) throw new WebhookVerificationError(`timestamp outside the tolerance of ${tolerance} s`);

  let valid: boolean;
  if (own !== null) {
    valid = equal(own, controlGraphSignature(input.secret, timestampText, body));
  } else {
    const expected = standardWebhooksSignature(input.secret, id!, timestampText, body);
    // Several space-separated signatures may be sent (key rotation); any v1 match is enough.
    valid = standard!.split(' ').some((candidate) => equal(candidate, expected));
  }
  if (!valid) throw new WebhookVerificationError('signature does not match');

  let event: Omit<VerifiedWebhook<T>, 'delivery_id'>;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('body is not JSON');
  }
  return { ...event, delivery_id: header(input.headers, 'x-controlgraph-delivery') ?? id };
}
