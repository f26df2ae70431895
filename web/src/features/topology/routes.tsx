import type { RouteObject } from 'react-router';

export const topologyRoutes: RouteObject[] = [{ path: 'topology', lazy: async () => ({ Component: (await import('./TopologyPage')).TopologyPage }) }];
