import type { RouteObject } from 'react-router';
import { prefetchFindingsPage } from './prefetch';

export const findingsRoutes: RouteObject[] = [
  { path: 'findings', loader: prefetchFindingsPage, lazy: async () => ({ Component: (await import('./FindingsPage')).FindingsPage }) },
  { path: 'findings/:findingId', lazy: async () => ({ Component: (await import('./FindingDetailPage')).FindingDetailPage }) },
];
