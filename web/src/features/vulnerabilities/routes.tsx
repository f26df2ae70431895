import type { RouteObject } from 'react-router';

export const vulnerabilitiesRoutes: RouteObject[] = [
  { path: 'vulnerabilities', lazy: async () => ({ Component: (await import('./VulnerabilitiesPage')).VulnerabilitiesPage }) },
  { path: 'vulnerabilities/hosts/:nodeId', lazy: async () => ({ Component: (await import('./HostPackagesPage')).HostPackagesPage }) },
];
