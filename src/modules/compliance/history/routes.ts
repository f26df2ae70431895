import type { RoutePlugin } from '../../module.js';
import { contextOf } from '../../../platform/auth/authenticator.js';
import { pageRequest } from '../../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../../platform/http/schemas.js';
import { createHistoryService } from './history-service.js';
import { createForecast } from './forecast.js';
import { Forecast, ForecastQuery, History, HistoryQuery, Trend, TrendQuery } from './schemas.js';

/**
 * The compliance state over time: past (GET /controls/history), the findings' flow per day (GET
 * /findings/trend), and the scores expected on a future date (GET /controls/forecast).
 */
export const historyRoutes: RoutePlugin = async (app, { deps }) => {
  const history = createHistoryService(deps);
  const forecast = createForecast(deps);

  app.get(
    '/tenants/:tenantID/controls/history',
    {
      config: { permission: 'findings:read', readCache: true },
      schema: {
        operationId: 'getControlsHistory',
        tags: ['controls'],
        summary: 'Scores, findings by severity and status, and control counts per framework at each day or audit of a range',
        description: 'At most 731 days per request (400 beyond); points are paged (per_page up to 1000). Points older than a year are thinned to one per ISO week.',
        params: TenantParams,
        querystring: HistoryQuery,
        response: withErrors({ 200: History }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...query } = request.query;
      return history.history(contextOf(request).scope, query, pageRequest({ page, per_page }, 400));
    },
  );

  app.get(
    '/tenants/:tenantID/findings/trend',
    {
      config: { permission: 'findings:read', readCache: true },
      schema: {
        operationId: 'getFindingsTrend',
        tags: ['findings'],
        summary: 'Findings opened, resolved and reopened per day, and the mean time to resolve per severity',
        description: 'At most 731 days per request (400 beyond).',
        params: TenantParams,
        querystring: TrendQuery,
        response: withErrors({ 200: Trend }, [401, 403]),
      },
    },
    async (request) => history.trend(contextOf(request).scope, request.query),
  );

  app.get(
    '/tenants/:tenantID/controls/forecast',
    {
      config: { permission: 'findings:read', readCache: true },
      schema: {
        operationId: 'getControlsForecast',
        tags: ['controls'],
        summary: "Each framework's score expected on a future date from expiring acceptances and attestations and POA&M items scheduled to close",
        description: 'date: in the future and at most 731 days ahead (400 otherwise).',
        params: TenantParams,
        querystring: ForecastQuery,
        response: withErrors({ 200: Forecast }, [401, 403]),
      },
    },
    async (request) => forecast(contextOf(request).scope, request.query.date),
  );
};
