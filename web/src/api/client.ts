import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

/**
 * The one way the console talks to the service: the typed client generated from our OpenAPI document.
 * The session lives in HttpOnly cookies the browser sends itself; script never sees a token.
 */
export const CSRF_HEADER = 'x-controlgraph-csrf';

/** Fired when the session cannot be renewed: the app goes to the sign-in page. */
export const SESSION_EXPIRED_EVENT = 'controlgraph:session-expired';

const SESSION_PATHS = ['/api/v1/auth/session', '/api/v1/auth/session/refresh'];
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

let refreshing: Promise<boolean> | null = null;

/** One refresh for every request that found its access cookie expired at the same moment. */
export function refreshSession(): Promise<boolean> {
  refreshing ??= fetch('/api/v1/auth/session/refresh', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { [CSRF_HEADER]: '1' },
  })
    .then((response) => response.ok)
    .catch(() => false)
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

const retries = new WeakMap<Request, Request>();

const sessionMiddleware: Middleware = {
  onRequest({ request }) {
    // Cookie sessions need this header on unsafe methods (CSRF defence). Not on reads: a GET with a
    // header of its own would not take the answer index.html preloaded (the session, see
    // src/modules/console/index-page.ts) and would ask again.
    if (!SAFE_METHODS.has(request.method)) request.headers.set(CSRF_HEADER, '1');
    retries.set(request, request.clone());
    return request;
  },
  async onResponse({ request, response }) {
    if (response.status !== 401 || SESSION_PATHS.some((path) => new URL(request.url).pathname === path)) return response;
    const retry = retries.get(request);
    if (retry && (await refreshSession())) return fetch(retry);
    window.dispatchEvent(new Event(SESSION_EXPIRED_EVENT));
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use(sessionMiddleware);

export type Paths = paths;
