/**
 * What a route declares about access, in its own definition. The authentication hook reads it:
 * `public` routes skip authentication; every other route needs a valid token or API key, and the
 * `permission` (resource:action) when one is given.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    public?: boolean;
    permission?: string;
    /** Excluded from rate limiting (health checks, metrics). */
    unlimited?: boolean;
    /** An action (POST) that takes no request body, so it declares no body schema. */
    bodyless?: boolean;
    /** The body is not JSON (multipart upload, gzip report) and is validated by the handler. */
    rawBody?: boolean;
  }
}

export {};
