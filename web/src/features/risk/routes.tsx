import type { RouteObject } from 'react-router';

export const riskRoutes: RouteObject[] = [
  { path: 'risk-acceptances', lazy: async () => ({ Component: (await import('./RiskAcceptancesPage')).RiskAcceptancesPage }) },
  { path: 'risk-acceptances/:acceptanceId', lazy: async () => ({ Component: (await import('./RiskAcceptanceDetailPage')).RiskAcceptanceDetailPage }) },
];
