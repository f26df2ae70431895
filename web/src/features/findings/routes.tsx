import type { RouteObject } from 'react-router';

export const findingsRoutes: RouteObject[] = [
  { path: 'findings', lazy: async () => ({ Component: (await import('./FindingsPage')).FindingsPage }) },
  { path: 'findings/:findingId', lazy: async () => ({ Component: (await import('./FindingDetailPage')).FindingDetailPage }) },
];
