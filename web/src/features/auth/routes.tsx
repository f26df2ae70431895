import type { RouteObject } from 'react-router';

/** The sign-in page, outside the shell. */
export const authRoutes: RouteObject[] = [{ path: '/sign-in', lazy: async () => ({ Component: (await import('./SignInPage')).SignInPage }) }];

/** The signed-in user's own settings, inside the shell. */
export const accountRoutes: RouteObject[] = [{ path: 'account/security', lazy: async () => ({ Component: (await import('./SecurityPage')).SecurityPage }) }];
