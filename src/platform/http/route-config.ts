/**
 * What a route declares about access, in its own definition. The authentication hook reads it:
 * `public` routes skip authentication; every other route needs a valid token (in the Authorization
 * header or the console's session cookie) or API key, and the `permission` (resource:action) when
 * one is given.
 */
import type { Permission } from '../rbac/roles.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    public?: boolean;
    /** A permission of the role catalog (platform/rbac/roles.ts): a misspelt one fails the type check, not a request. */
    permission?: Permission;
    /**
     * A public route that acts on the browser's session cookies (sign-in, refresh, sign-out): it
     * requires the CSRF header as a cookie-authenticated unsafe request does (platform/auth/session-cookies.ts).
     */
    csrf?: boolean;
    /** Excluded from rate limiting (health checks, metrics). */
    unlimited?: boolean;
    /** An action (POST) that takes no request body, so it declares no body schema. */
    bodyless?: boolean;
    /** The body is not JSON (multipart upload, gzip report) and is validated by the handler. */
    rawBody?: boolean;
    /**
     * Open to a session the tenant holds to enrolling an authenticator (it requires multi-factor
     * sign-in and the session was opened with a password alone); every other route answers 403
     * MFA_ENROLLMENT_REQUIRED to it.
     */
    duringMfaEnrollment?: boolean;
  }
}
