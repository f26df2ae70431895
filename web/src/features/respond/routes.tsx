import type { RouteObject } from 'react-router';

/** The outside respondent's page: outside the shell and the session, opened by a link's token alone. */
export const respondRoutes: RouteObject[] = [{ path: '/respond', lazy: async () => ({ Component: (await import('./RespondPage')).RespondPage }) }];
