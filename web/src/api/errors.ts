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
  const body = (result.error ?? {}) as ApiErrorBody;
  throw new ApiError(result.response.status, body.error?.code ?? 'ERROR', body.error?.message ?? result.response.statusText, body.error?.details ?? null);
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
