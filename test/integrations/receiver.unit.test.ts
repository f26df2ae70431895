import { createHmac } from 'node:crypto';
import * as crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../src/modules/integrations/receiver.js';
import { signatureHeaders, standardWebhooksKey } from '../../src/modules/integrations/signing.js';

// A pass-through spy on node:crypto's timingSafeEqual: the receiver must compare signatures with it.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const SECRET = 'a-webhook-secret-of-some-length';
const body = JSON.stringify({ id: '0b7c…', type: 'finding.created', tenant_id: 't', timestamp: '2026-11-23T12:00:00.000Z', data: { finding: { id: 'f1', severity: 'HIGH' } } });
const now = new Date('2026-11-23T12:00:00Z');
const headers = (overrides: Partial<Parameters<typeof signatureHeaders>[0]> = {}) =>
  signatureHeaders({ secret: SECRET, deliveryId: 'd2f1c9a4-0000-4000-8000-000000000001', eventType: 'finding.created', body, now, ...overrides });

afterEach(() => vi.mocked(crypto.timingSafeEqual).mockClear());

describe('signature headers', () => {
  it('X-ControlGraph-Signature is sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>"> with the secret', () => {
    const h = headers();
    const ts = String(Math.floor(now.getTime() / 1000));
    expect(h['X-ControlGraph-Timestamp']).toBe(ts);
    expect(h['X-ControlGraph-Event']).toBe('finding.created');
    expect(h['X-ControlGraph-Signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`);
    expect(h['X-ControlGraph-Delivery']).toBe('d2f1c9a4-0000-4000-8000-000000000001');
    expect(h['Idempotency-Key']).toBe(h['X-ControlGraph-Delivery']);
  });

  it('webhook-signature is v1,<base64 HMAC of "<id>.<timestamp>.<body>">, keyed by the base64 payload of a whsec_ secret', () => {
    const key = Buffer.from('0123456789abcdef0123456789abcdef');
    const secret = `whsec_${key.toString('base64')}`;
    const h = headers({ secret });
    expect(standardWebhooksKey(secret)).toEqual(key);
    expect(h['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update(`${h['webhook-id']}.${h['webhook-timestamp']}.${body}`).digest('base64')}`);
    expect(standardWebhooksKey('plain secret')).toEqual(Buffer.from('plain secret'));
  });

  it('the standardwebhooks library verifies both kinds of secret', () => {
    const signedNow = new Date();
    const whsec = `whsec_${Buffer.from('a 24 byte key for tests.').toString('base64')}`;
    const a = signatureHeaders({ secret: whsec, deliveryId: 'msg_1', eventType: 'finding.created', body, now: signedNow });
    expect(new Webhook(whsec).verify(body, a)).toEqual(JSON.parse(body));
    const b = signatureHeaders({ secret: SECRET, deliveryId: 'msg_2', eventType: 'finding.created', body, now: signedNow });
    expect(new Webhook(SECRET, { format: 'raw' }).verify(body, b)).toEqual(JSON.parse(body));
    expect(() => new Webhook(SECRET, { format: 'raw' }).verify(`${body} `, b)).toThrow();
  });
});

describe('verifyWebhook (the receiver helper)', () => {
  it('returns the event and the delivery id for a valid request (headers in any case, string or bytes)', () => {
    const h = headers();
    const event = verifyWebhook({ secret: SECRET, headers: h, rawBody: body, now });
    expect(event).toMatchObject({ type: 'finding.created', data: { finding: { id: 'f1' } }, delivery_id: h['X-ControlGraph-Delivery'] });
    const lower = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
    expect(verifyWebhook({ secret: SECRET, headers: lower, rawBody: Buffer.from(body), now }).type).toBe('finding.created');
    expect(verifyWebhook({ secret: SECRET, headers: new Headers(h), rawBody: new TextEncoder().encode(body), now }).type).toBe('finding.created');
  });

  it('compares the signature in constant time (crypto.timingSafeEqual over equal-length buffers)', () => {
    verifyWebhook({ secret: SECRET, headers: headers(), rawBody: body, now });
    const calls = vi.mocked(crypto.timingSafeEqual).mock.calls;
    expect(calls).toHaveLength(1);
    const [a, b] = calls[0]! as unknown as [Buffer, Buffer];
    expect(a.length).toBe(b.length);
  });

  it('accepts timestamps up to 300 s away and refuses 301 s, in both directions', () => {
    const h = headers();
    const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);
    expect(() => verifyWebhook({ secret: SECRET, headers: h, rawBody: body, now: at(300) })).not.toThrow();
    expect(() => verifyWebhook({ secret: SECRET, headers: h, rawBody: body, now: at(-300) })).not.toThrow();
    expect(() => verifyWebhook({ secret: SECRET, headers: h, rawBody: body, now: at(301) })).toThrow('timestamp outside the tolerance of 300 s');
    expect(() => verifyWebhook({ secret: SECRET, headers: h, rawBody: body, now: at(-301) })).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook({ secret: SECRET, headers: h, rawBody: body, now: at(500), toleranceSeconds: 600 })).not.toThrow();
  });

  it('refuses a changed body, another secret, a re-signed timestamp, and missing headers', () => {
    const h = headers();
    expect(() => verifyWebhook({ secret: SECRET, headers: h, rawBody: body.replace('HIGH', 'LOW'), now })).toThrow('signature does not match');
    expect(() => verifyWebhook({ secret: 'another secret', headers: h, rawBody: body, now })).toThrow('signature does not match');
    const replayed = { ...h, 'X-ControlGraph-Timestamp': String(Number(h['X-ControlGraph-Timestamp']) + 10) };
    expect(() => verifyWebhook({ secret: SECRET, headers: replayed, rawBody: body, now })).toThrow('signature does not match');
    expect(() => verifyWebhook({ secret: SECRET, headers: { 'content-type': 'application/json' }, rawBody: body, now })).toThrow('missing signature header');
    const { 'X-ControlGraph-Timestamp': _drop, ...noTimestamp } = h;
    expect(() => verifyWebhook({ secret: SECRET, headers: noTimestamp, rawBody: body, now })).toThrow('missing or invalid timestamp header');
    expect(() => verifyWebhook({ secret: '', headers: h, rawBody: body, now })).toThrow('no secret given');
    expect(() => verifyWebhook({ secret: SECRET, headers: { ...h, 'X-ControlGraph-Signature': 'sha256=00' }, rawBody: body, now })).toThrow('signature does not match');
  });

  it('falls back to the Standard Webhooks headers (any of several signatures)', () => {
    const h = headers();
    const standardOnly = { 'webhook-id': h['webhook-id']!, 'webhook-timestamp': h['webhook-timestamp']!, 'webhook-signature': `v1,bm90IGl0 ${h['webhook-signature']}` };
    expect(verifyWebhook({ secret: SECRET, headers: standardOnly, rawBody: body, now })).toMatchObject({ type: 'finding.created', delivery_id: h['webhook-id'] });
    expect(() => verifyWebhook({ secret: SECRET, headers: { ...standardOnly, 'webhook-id': 'another' }, rawBody: body, now })).toThrow('signature does not match');
  });
});
