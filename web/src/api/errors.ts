/** The service's error envelope: `{error: {code, message, details}}`. */
export interface ApiErrorBody {
  error?: { code?: string; message?: string; details?: unknown };
}

/** An API refusal as an Error, with the service's code, so screens show the service's own words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The envelope's `details` (e.g. SSO's `{errors: {field: message}}`), for showing a refusal by field. */
    readonly details: unknown = null,
  ) {
    super(message);
  }
}

/** Unwraps an openapi-fetch result: its data, or an ApiError with the service's message. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok) return result.data as T;
  throw apiErrorOf(result.response.status, result.response.statusText, result.error);
}

/** A refusal's envelope (or whatever came instead) as an ApiError; the status text when it has no message. */
export function apiErrorOf(status: number, statusText: string, body: unknown): ApiError {
  const envelope = ((body ?? {}) as ApiErrorBody).error;
  return new ApiError(status, envelope?.code ?? 'ERROR', envelope?.message ?? statusText, envelope?.details ?? null);
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
