import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, CODE_BY_STATUS } from './errors.js';
import { ArtifactTooLargeError } from '../artifacts/store.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { validationIssues } from './validation-issues.js';
import { noteErrorAnswer } from './request-log.js';

/**
 * The multipart parser (@fastify/busboy, under @fastify/multipart) reports a malformed body with plain
 * Errors, thrown or emitted on the file stream a handler is reading: each is the client's bad
 * request. The messages are busboy's own; test/fuzz/bad-input.test.ts pins them.
 */
const MULTIPART_FAULTS: Array<[RegExp, string]> = [
  [/^(Multipart: Boundary not found|Boundary required)$/, 'the multipart content type has no boundary'],
  [/^The needle cannot have a length bigger than \d+/, 'the multipart boundary is too long'],
  [/unexpected end of multipart data$/i, 'the multipart body ends before its closing boundary'],
  [/^Unexpected end of form$/, 'the multipart body ends before its closing boundary'],
];

function multipartFault(error: Error, request: FastifyRequest): AppError | null {
  if (!/^multipart\//i.test(String(request.headers['content-type'] ?? '').trimStart())) return null;
  const fault = MULTIPART_FAULTS.find(([pattern]) => pattern.test(error.message));
  return fault ? new AppError(400, 'BAD_REQUEST', fault[1]) : null;
}

/** Maps everything thrown in a request to the spec's error envelope; no stack or SQL ever leaves. */
function toAppError(error: FastifyError | AppError | Error, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof ArtifactTooLargeError) return new AppError(413, 'PAYLOAD_TOO_LARGE', error.message);
  const multipart = multipartFault(error, request);
  if (multipart) return multipart;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const where = fastifyError.validationContext ?? 'request';
    const issues = validationIssues(fastifyError.validation, request, where);
    const first = issues[0];
    const message = first ? `invalid ${where}: ${first.path} ${first.message}` : `invalid ${where}`;
    return new AppError(400, 'BAD_REQUEST', message, { location: where, errors: issues });
  }
  // PostgreSQL data exceptions (SQLSTATE class 22: a NUL byte or bad encoding in text, a number out
  // of range, an invalid date) come from values the client sent: a bad request, never SQL text.
  const sqlState = (error as { code?: unknown }).code;
  if (typeof sqlState === 'string' && /^22[0-9A-Z]{3}$/.test(sqlState) && 'severity' in error) {
    return new AppError(400, 'BAD_REQUEST', 'a value in the request cannot be stored or compared (invalid characters, or out of range)');
  }
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    // Fastify's own client errors: malformed JSON, empty body, wrong content type, too large.
    // A wrong content type is the client's bad request here (the spec has no 415).
    const mapped = status === 415 ? 400 : status;
    const message =
      fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? `unsupported content type ${JSON.stringify(request.headers['content-type'] ?? '')}` : fastifyError.message;
    return new AppError(mapped, CODE_BY_STATUS[mapped] ?? 'BAD_REQUEST', message);
  }
  if (isDatabaseUnavailable(error)) {
    return new AppError(503, 'SERVICE_UNAVAILABLE', 'the database is unavailable; retry shortly', null, {}, { 'retry-after': '5' });
  }
  return new AppError(500, 'INTERNAL_ERROR', 'internal server error');
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  noteErrorAnswer(reply, error.code, error.message);
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.status(error.status).send({
    error: { code: error.code, message: error.message, details: error.details },
    ...error.extra,
  });
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error, request);
    // A refusal (4xx) is told by the request's own line (request-log.ts); a failure also here, with its cause.
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(reply, appError);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, new AppError(404, 'NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} not found`)));
}
