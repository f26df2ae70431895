import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * One info line per request, written when the response is finished: method, URL (query values that
 * may be credentials replaced), status, duration and, for an error answer, its code and message. The
 * request id is the line's `reqId` (the request logger's binding). Fastify's own two lines per
 * request ("incoming request", "request completed") are switched off (`disableRequestLogging`), so an
 * operator reads one line per request; a 5xx is also logged at error level, with its cause, by the
 * error handler.
 */

/** What an error answer said, for its request's line (recorded by sendError). */
const answered = new WeakMap<FastifyReply, { code: string; message: string }>();

export function noteErrorAnswer(reply: FastifyReply, code: string, message: string): void {
  answered.set(reply, { code, message });
}

/**
 * Query parameters whose values may be credentials: signed-link signatures, OIDC codes and states,
 * SAML messages, and anything named like a token, secret, password or key.
 */
const SECRET_PARAM = /token|secret|passw|signature|credential|api[_-]?key|^key$|^code$|^state$|^session_state$|^saml|^relaystate$/i;

/** The URL as logged: the path as received, the query with the values of secret-looking parameters replaced. */
export function loggableUrl(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: judge the name as sent
      }
      return eq >= 0 && SECRET_PARAM.test(name) ? `${rawName}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, at)}?${query}`;
}

export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const error = answered.get(reply);
    request.log.info(
      {
        method: request.method,
        url: loggableUrl(request.url),
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
        ...(error ? { error } : {}),
      },
      'request',
    );
  });
}
