import type { Envelope } from './summary.js';

/** What a formatter turns an event into: one HTTP request, or one e-mail. */
export type Prepared =
  | { kind: 'http'; url: string; method: 'POST'; headers: Record<string, string>; body: string }
  | { kind: 'email'; to: string[]; cc: string[]; subject: string; text: string; html: string; headers: Record<string, string> };

export interface FormatContext {
  /** The integration's full configuration (secrets included). */
  config: Record<string, unknown>;
  /** The envelope as stored (the exact webhook body). */
  envelopeText: string;
  envelope: Envelope;
  deliveryId: string;
  now: Date;
}

/** A configuration that cannot produce a request (a failed attempt; fixing it with PUT helps). */
export class FormatError extends Error {
  override name = 'FormatError';
}

export const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
