import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, CODE_BY_STATUS } from './errors.js';
import { ArtifactTooLargeError } from '../artifacts/store.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';

interface ValidationIssue {
  path: string;
  message: string;
}

function validationIssues(error: FastifyError): ValidationIssue[] {
  return (error.validation ?? []).map((v) => {
    const params = v.params as Record<string, unknown>;
    // Ajv names the missing or extra property in params, not in the path: fold it in.
    const property = (params?.missingProperty ?? params?.additionalProperty) as string | undefined;
    const base = v.instancePath || '';
    return { path: property ? `${base}/${property}` : base || '/', message: v.message ?? 'is invalid' };
  });
}

/** Maps everything thrown in a request to the spec's error envelope; no stack or SQL ever leaves. */
function toAppError(error: FastifyError | AppError | Error, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof ArtifactTooLargeError) return new AppError(413, 'PAYLOAD_TOO_LARGE', error.message);
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const issues = validationIssues(fastifyError);
    const where = fastifyError.validationContext ?? 'request';
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
    const message = fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
      ? `unsupported content type ${JSON.stringify(request.headers['content-type'] ?? '')}`
      : fastifyError.message;
    return new AppError(mapped, CODE_BY_STATUS[mapped] ?? 'BAD_REQUEST', message);
  }
  if (isDatabaseUnavailable(error)) {
    return new AppError(503, 'SERVICE_UNAVAILABLE', 'the database is unavailable; retry shortly', null, {}, { 'retry-after': '5' });
  }
  return new AppError(500, 'INTERNAL_ERROR', 'internal server error');
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.status(error.status).send({
    error: { code: error.code, message: error.message, details: error.details },
    ...error.extra,
  });
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error, request);
    if (appError.status >= 500) {
      request.log.error({ err: error }, 'request failed');
    } else {
      request.log.info({ code: appError.code, status: appError.status, msg: appError.message }, 'request refused');
    }
    return sendError(reply, appError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new AppError(404, 'NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} not found`)),
  );
}
