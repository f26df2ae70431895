import type { RouteObject } from 'react-router';

export const servicesRoutes: RouteObject[] = [
  { path: 'services', lazy: async () => ({ Component: (await import('./ServicesPage')).ServicesPage }) },
  { path: 'services/applications/:applicationId', lazy: async () => ({ Component: (await import('./MembersPage')).ApplicationPage }) },
  { path: 'services/asset-groups/:groupId', lazy: async () => ({ Component: (await import('./MembersPage')).AssetGroupPage }) },
  { path: 'services/:serviceId', lazy: async () => ({ Component: (await import('./ServiceDetailPage')).ServiceDetailPage }) },
];
