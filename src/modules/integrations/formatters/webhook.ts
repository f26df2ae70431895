import { signatureHeaders } from '../signing.js';
import type { FormatContext, Prepared } from './types.js';

/** The envelope as the body, signed (both schemes), with the configured extra headers. */
export function webhookRequest(ctx: FormatContext): Prepared {
  const config = ctx.config as { url: string; secret: string; headers?: Record<string, string> };
  return {
    kind: 'http',
    url: config.url,
    method: 'POST',
    headers: {
      ...(config.headers ?? {}),
      'content-type': 'application/json',
      ...signatureHeaders({ secret: config.secret, deliveryId: ctx.deliveryId, eventType: ctx.envelope.type, body: ctx.envelopeText, now: ctx.now }),
    },
    body: ctx.envelopeText,
  };
}
