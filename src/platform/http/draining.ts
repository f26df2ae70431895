import type { FastifyInstance } from 'fastify';
import { sendError } from './error-handler.js';
import { unavailable } from './errors.js';

/**
 * While the service shuts down it finishes the requests it has, and refuses any that still reach it
 * (pipelined, or on a connection it already held) with 503 in the error envelope, `Connection: close`
 * and `Retry-After`, so a client or load balancer retries elsewhere. Fastify's own refusal
 * (`return503OnClosing`, switched off in app.ts) answers with a body of another shape.
 */
export function installDraining(app: FastifyInstance): void {
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!draining) return;
    // Sent here rather than thrown: a route's own 503 schema (/healthz has one) would not fit the envelope.
    return sendError(reply.header('connection', 'close').header('retry-after', '1').serializer(JSON.stringify), unavailable('the service is shutting down: retry the request'));
  });
}
