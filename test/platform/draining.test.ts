import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';

/**
 * A closing service finishes the request it has and refuses, in the error envelope, one that still
 * reaches it. Over a raw socket, so the second request can be pipelined behind the first on the one
 * connection the service keeps open while it drains.
 */
let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as net.AddressInfo).port;
});
afterAll(() => t.close());

describe('shutting down', () => {
  it('finishes the request in flight and answers one pipelined behind it with 503 SERVICE_UNAVAILABLE, Connection: close and Retry-After', async () => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const body = JSON.stringify({ username: 'nobody-here', password: 'not the password at all' });
    // The service answers 100 Continue as it routes the request: from then on the request is in flight.
    socket.write(
      `POST /api/v1/auth/token HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nexpect: 100-continue\r\n\r\n`,
    );
    await until(() => received.includes('100 Continue'));
    const closing = t.app.close();
    socket.write(`${body}GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n`);
    await ended;
    await closing;
    const [first, second] = received.split(/(?=HTTP\/1\.1 (?!100)\d{3})/).filter((part) => !part.startsWith('HTTP/1.1 100'));
    expect(first).toMatch(/^HTTP\/1\.1 401 /);
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    expect(second).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(JSON.parse(second!.slice(second!.indexOf('\r\n\r\n') + 4))).toMatchObject({
      error: { code: 'SERVICE_UNAVAILABLE', message: 'the service is shutting down: retry the request' },
    });
  });
});

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!done()) throw new Error('timed out');
}
