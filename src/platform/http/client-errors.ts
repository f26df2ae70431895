import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { lookupTable } from '../lookup-table.js';

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers over the size limit, a
 * malformed request line, a request that took too long to arrive) are answered with the error
 * envelope too, as Fastify's `clientErrorHandler`. Nothing of the request is known here: no route, no
 * request id.
 */
const ANSWERS: Record<string, [number, string, string]> = lookupTable({
  HPE_HEADER_OVERFLOW: [431, 'HEADERS_TOO_LARGE', 'the request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'REQUEST_TIMEOUT', 'the request did not arrive in time'],
});
const MALFORMED: [number, string, string] = [400, 'BAD_REQUEST', 'the request is not valid HTTP'];

export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] = ANSWERS[error.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ error: { code, message, details: null } });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
