import type { RouteObject } from 'react-router';

export const controlsRoutes: RouteObject[] = [{ path: 'controls', lazy: async () => ({ Component: (await import('./ControlsPage')).ControlsPage }) }];
