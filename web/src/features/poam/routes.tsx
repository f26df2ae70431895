import type { RouteObject } from 'react-router';

export const poamRoutes: RouteObject[] = [
  { path: 'poam', lazy: async () => ({ Component: (await import('./PoamPage')).PoamPage }) },
  { path: 'poam/:poamId', lazy: async () => ({ Component: (await import('./PoamItemPage')).PoamItemPage }) },
];
