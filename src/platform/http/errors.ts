/**
 * The one error type. Every error the API returns is `{error: {code, message, details}}` built from an
 * AppError (or mapped to one by the error handler); `extra` adds top-level fields such as retry_after.
 */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> | null = null,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The error code for each status the service answers with. */
export const CODE_BY_STATUS: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  410: 'GONE',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  429: 'RATE_LIMITED',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

type Details = Record<string, unknown> | null;

export const badRequest = (message: string, details: Details = null) => new AppError(400, 'BAD_REQUEST', message, details);
export const unauthorized = (message = 'authentication required') => new AppError(401, 'UNAUTHORIZED', message);
export const forbidden = (message = 'insufficient permissions') => new AppError(403, 'FORBIDDEN', message);
export const notFound = (message = 'not found') => new AppError(404, 'NOT_FOUND', message);
export const conflict = (message: string, details: Details = null) => new AppError(409, 'CONFLICT', message, details);
export const gone = (message: string) => new AppError(410, 'GONE', message);
export const payloadTooLarge = (message: string, details: Details = null) => new AppError(413, 'PAYLOAD_TOO_LARGE', message, details);
export const unavailable = (message: string) => new AppError(503, 'SERVICE_UNAVAILABLE', message);
export const rateLimited = (retryAfterSeconds: number) =>
  new AppError(429, 'RATE_LIMITED', 'too many requests', { retry_after: retryAfterSeconds }, { retry_after: retryAfterSeconds }, { 'retry-after': String(retryAfterSeconds) });
