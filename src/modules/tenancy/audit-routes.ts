import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { Paged, TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createAuditLogService } from './audit-service.js';
import { AuditLogEntry, AuditLogQuery } from './schemas.js';

export const auditRoutes: RoutePlugin = async (app, { deps }) => {
  const audit = createAuditLogService(deps);
  app.get(
    '/tenants/:tenantID/audit-logs',
    {
      config: { permission: 'logs:read' },
      schema: {
        operationId: 'listAuditLogs',
        tags: ['audit'],
        summary: 'Security-relevant changes in the tenant, newest first',
        params: TenantParams,
        querystring: AuditLogQuery,
        response: withErrors({ 200: Paged(AuditLogEntry) }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filters } = request.query;
      return audit.list(contextOf(request), filters, pageRequest({ page, per_page }));
    },
  );
};
