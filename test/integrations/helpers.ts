import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp, type TestApp, type TestAppOptions } from '../harness/app.js';
import { call } from '../harness/identity.js';
import { emitEvents, type NewEvent } from '../../src/platform/events/outbox.js';

/**
 * Loopback receivers for delivery tests. Every external system (webhook receivers, Slack, Teams,
 * Jira, GitHub, PagerDuty) is played by a local HTTP server: the real services cannot be reached from
 * the test machine, so the tests check the exact requests their APIs document instead.
 */
export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Responder = (request: Received, res: ServerResponse) => void | Promise<void>;

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** TCP connections accepted so far (a refused target must not even connect). */
  connections: number;
  /** Responses for the next requests, in order; after them `fallback` answers. */
  queue: Responder[];
  fallback: Responder;
  /** Between tests: forgets the requests and queued responses; `fallback`, when given, answers from now on. */
  reset(fallback?: Responder): void;
  close(): Promise<void>;
}

export const reply =
  (status: number, body = '', headers: Record<string, string> = {}): Responder =>
  (_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };

export async function startReceiver(options: { host?: string; tls?: { key: string; cert: string } } = {}): Promise<Receiver> {
  const state: Omit<Receiver, 'url' | 'port' | 'reset' | 'close'> = { requests: [], connections: 0, queue: [], fallback: reply(200, 'ok') };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      state.requests.push(received);
      const responder = state.queue.shift() ?? state.fallback;
      Promise.resolve(responder(received, res)).catch(() => res.destroy());
    });
  };
  const server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler) : http.createServer(handler);
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: Receiver = Object.assign(state, {
    port,
    url: `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    reset(fallback?: Responder) {
      state.requests.length = 0;
      state.queue.length = 0;
      if (fallback) state.fallback = fallback;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return receiver;
}

/** A self-signed certificate for a host name, made with the openssl CLI (Node cannot create X.509). */
export function selfSignedCertificate(commonName: string, altNames: string[]): { key: string; cert: string; certFile: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'cg-cert-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-sha256',
      '-days',
      '2',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      `subjectAltName=${altNames.join(',')}`,
    ],
    { stdio: 'pipe' },
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The tests' DNS for the outbound guard (no real lookups): localhost answers both loopback addresses
 * whatever this machine's hosts file says; other names do not resolve (https:// targets that do not
 * resolve are accepted at creation and never reached).
 */
export const testDns = async (host: string): Promise<Array<{ address: string; family: number }>> => {
  if (host === 'localhost')
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

/**
 * A test app whose webhook targets may be 127.0.0.1 (allow-listed, so http:// too), through the
 * deprecated alias CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS, which keeps working.
 */
export function createDeliveryApp(options: TestAppOptions & { allowHosts?: string } = {}): Promise<TestApp> {
  return createTestApp({
    ...options,
    env: { CONTROLGRAPH_WEBHOOK_ALLOW_HOSTS: options.allowHosts ?? '127.0.0.1', ...options.env },
    config: { outboundLookup: testDns, ...options.config },
  });
}

/** Between tests: the tenants' integrations deleted and the jobs left for them run (they find nothing to do). */
export async function removeIntegrations(t: TestApp, tenantIds: string[]): Promise<void> {
  await t.deps.database.db.deleteFrom('integrations').where('tenant_id', 'in', tenantIds).execute();
  await t.drain();
}

/** Writes events to the outbox in one transaction, as a domain service would. */
export async function emit(t: TestApp, events: NewEvent[]): Promise<void> {
  await t.deps.database.db.transaction().execute((trx) => emitEvents(trx, t.clock, events));
}

let findingCounter = 0;
export function findingCreated(tenantId: string, workspaceId: string, overrides: Record<string, unknown> = {}): NewEvent {
  findingCounter++;
  return {
    tenantId,
    workspaceId,
    type: 'finding.created',
    data: {
      finding: {
        id: `aws-s3-bucket-versioning:aws:us-east-1:aws.s3.bucket:bucket-${findingCounter}`,
        rule_id: 'aws-s3-bucket-versioning',
        framework: 'cis-aws',
        control_id: '2.1.3',
        severity: 'HIGH',
        title: 'S3 bucket versioning is not enabled',
        description: 'Versioning protects objects against accidental deletion.',
        resource_id: `aws:us-east-1:aws.s3.bucket:bucket-${findingCounter}`,
        resource_type: 'aws.s3.bucket',
        resource_name: `bucket-${findingCounter}`,
        region: 'us-east-1',
        remediation: 'Enable versioning on the bucket.',
        created_at: '2026-11-23T12:00:00.000Z',
        ...overrides,
      },
    },
  };
}

export async function createIntegration(t: TestApp, token: string, tenantId: string, body: Record<string, unknown>, expect = 201) {
  const res = await call(t.app, token, { method: 'POST', url: `/api/v1/tenants/${tenantId}/integrations`, payload: body, expect });
  return res.json();
}

export async function deliveriesOf(t: TestApp, token: string, tenantId: string, integrationId: string, query = '') {
  const res = await call(t.app, token, { url: `/api/v1/tenants/${tenantId}/integrations/${integrationId}/deliveries${query}`, expect: 200 });
  return res.json() as { items: Array<Record<string, any>>; total: number };
}

export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 5_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface Mail {
  from: string;
  to: string[];
  user: string | null;
  raw: string;
}

export interface SmtpReceiver {
  port: number;
  url: string;
  messages: Mail[];
  /** Recipients answered 550 (mailbox unavailable) at RCPT TO. */
  rejectRecipients: Set<string>;
  close(): Promise<void>;
}

/**
 * A real SMTP server on loopback (the smtp-server package): plain SMTP without STARTTLS, AUTH
 * PLAIN/LOGIN with the given users (optional when none are given), every accepted message kept raw.
 */
export async function startSmtpServer(options: { users?: Record<string, string> } = {}): Promise<SmtpReceiver> {
  const { SMTPServer } = await import('smtp-server');
  const messages: Mail[] = [];
  const rejectRecipients = new Set<string>();
  const users = options.users;
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: !users,
    logger: false,
    onAuth(auth, _session, callback) {
      if (users && users[auth.username ?? ''] === auth.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (rejectRecipients.has(address.address)) {
        const error = new Error(`Mailbox unavailable: ${address.address}`) as Error & { responseCode: number };
        error.responseCode = 550;
        callback(error);
      } else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: (session.user as string | undefined) ?? null,
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    rejectRecipients,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Headers (unfolded, lower-case names) and the decoded text/plain and text/html parts of a raw message. */
export function parseMail(raw: string): { headers: Record<string, string>; text: string; html: string } {
  const [head, ...rest] = raw.split(/\r?\n\r?\n/);
  const headers: Record<string, string> = {};
  for (const line of head!.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  const body = rest.join('\n\n');
  const boundary = /boundary="?([^";]+)"?/.exec(headers['content-type'] ?? '')?.[1];
  const parts = boundary ? body.split(`--${boundary}`).slice(1, -1) : [body];
  const part = (type: string) => {
    const found = parts.find((p) => new RegExp(`Content-Type: ${type}`, 'i').test(p));
    if (!found) return '';
    const [partHead, ...partBody] = found.replace(/^\r?\n/, '').split(/\r?\n\r?\n/);
    const encoding = /Content-Transfer-Encoding: ([\w-]+)/i.exec(partHead!)?.[1]?.toLowerCase();
    const content = partBody.join('\r\n\r\n').replace(/\r?\n$/, '');
    if (encoding === 'quoted-printable') {
      const bytes = content.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      return Buffer.from(bytes, 'latin1').toString('utf8');
    }
    if (encoding === 'base64') return Buffer.from(content, 'base64').toString('utf8');
    return content;
  };
  return { headers, text: part('text/plain'), html: part('text/html') };
}
