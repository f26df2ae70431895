import { createBrowserRouter, type RouteObject } from 'react-router';
import { RequireSession } from '../session/RequireSession';
import { Shell } from './Shell';
import { NotFoundPage } from './NotFoundPage';
import { authRoutes, accountRoutes } from '../features/auth/routes';
import { overviewRoutes } from '../features/overview/routes';
import { findingsRoutes } from '../features/findings/routes';
import { controlsRoutes } from '../features/controls/routes';
import { riskRoutes } from '../features/risk/routes';
import { topologyRoutes } from '../features/topology/routes';
import { rulesRoutes } from '../features/rules/routes';
import { adminRoutes } from '../features/admin/routes';
import { respondRoutes } from '../features/respond/routes';
import { questionnairesRoutes } from '../features/questionnaires/routes';
import { assessmentsRoutes } from '../features/assessments/routes';
import { poamRoutes } from '../features/poam/routes';
import { vulnerabilitiesRoutes } from '../features/vulnerabilities/routes';
import { servicesRoutes } from '../features/services/routes';

/**
 * Every screen, by feature. Each feature's pages load on demand (`lazy` in its routes.tsx), so the
 * first load carries only the shell and the page it opens.
 */
const signedIn: RouteObject[] = [
  ...overviewRoutes,
  ...findingsRoutes,
  ...controlsRoutes,
  ...riskRoutes,
  ...poamRoutes,
  ...topologyRoutes,
  ...rulesRoutes,
  ...questionnairesRoutes,
  ...assessmentsRoutes,
  ...vulnerabilitiesRoutes,
  ...servicesRoutes,
  ...adminRoutes,
  ...accountRoutes,
  { path: '*', element: <NotFoundPage /> },
];

export const router = createBrowserRouter([
  ...authRoutes,
  ...respondRoutes,
  {
    path: '/',
    element: (
      <RequireSession>
        <Shell />
      </RequireSession>
    ),
    children: signedIn,
  },
]);
