import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { Config } from '../../config.js';
import { AppError } from '../http/errors.js';

/**
 * The browser session of the web console (docs/console.md, "Sign-in and sessions"): the access JWT
 * and the refresh token live in HttpOnly cookies, so no script of the page can read them. These
 * are the same tokens the token endpoints return, carried differently.
 */

/** The access JWT; sent with every request to the service. */
export const SESSION_COOKIE = 'cg_session';
/** The refresh token; sent only to the session endpoints, never to the rest of the API. */
export const REFRESH_COOKIE = 'cg_refresh';
export const REFRESH_COOKIE_PATH = '/api/v1/auth/session';

/**
 * Cookies ride along with requests a browser is made to send from other sites' pages: a request
 * authenticated by the session cookie proves it comes from the console by a header a form or a
 * link cannot send (and a cross-site script could only send after a CORS preflight this service
 * never grants). SameSite=Strict is the second line.
 */
export const CSRF_HEADER = 'x-controlgraph-csrf';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const csrfRequired = () =>
  new AppError(403, 'CSRF_REQUIRED', `the header "${CSRF_HEADER}: 1" is required for cookie sessions (on POST, PUT, PATCH and DELETE, and on sign-in and refresh)`);

export function isUnsafeMethod(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

export function assertCsrfHeader(request: FastifyRequest): void {
  if (request.headers[CSRF_HEADER] !== '1') throw csrfRequired();
}

/** The session's tokens, as issued by the token endpoints (tenancy/tokens.ts). */
export interface SessionTokens {
  token: string;
  refresh_token: string;
}

type Lifetimes = Pick<Config, 'accessTokenTtlMs' | 'refreshTokenTtlMs'>;

function options(reply: FastifyReply, path: string, maxAgeMs: number): CookieSerializeOptions {
  // Secure follows the request's scheme (X-Forwarded-Proto counts from CONTROLGRAPH_TRUSTED_PROXIES
  // only): a browser drops a Secure cookie set over plain http, which would end every local set-up.
  return { httpOnly: true, sameSite: 'strict', path, secure: reply.request.protocol === 'https', maxAge: Math.floor(maxAgeMs / 1000) };
}

/** Sets (or replaces) both cookies; they live as long as the tokens they carry. */
export function setSessionCookies(reply: FastifyReply, tokens: SessionTokens, lifetimes: Lifetimes): FastifyReply {
  reply.setCookie(SESSION_COOKIE, tokens.token, options(reply, '/', lifetimes.accessTokenTtlMs));
  reply.setCookie(REFRESH_COOKIE, tokens.refresh_token, options(reply, REFRESH_COOKIE_PATH, lifetimes.refreshTokenTtlMs));
  return reply;
}

/** Clears both cookies (same names, paths and attributes, so the browser replaces them). */
export function clearSessionCookies(reply: FastifyReply): FastifyReply {
  reply.clearCookie(SESSION_COOKIE, options(reply, '/', 0));
  reply.clearCookie(REFRESH_COOKIE, options(reply, REFRESH_COOKIE_PATH, 0));
  return reply;
}

/** The session cookies the request carries (empty values count as absent). */
export function sessionCookiesOf(request: FastifyRequest): { access: string | null; refresh: string | null } {
  const cookies = request.cookies ?? {};
  return { access: cookies[SESSION_COOKIE] || null, refresh: cookies[REFRESH_COOKIE] || null };
}
