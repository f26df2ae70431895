import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createAcceptanceService } from './acceptance-service.js';
import { Acceptance, AcceptanceBody, AcceptanceList, AcceptanceListQuery, AcceptanceParams, FindingParams, GroupParams } from './schemas.js';

/** Risk acceptance of single findings and of root-cause groups. */
export const riskRoutes: RoutePlugin = async (app, { deps }) => {
  const acceptances = createAcceptanceService(deps);
  const tags = ['risk'];

  app.post(
    '/tenants/:tenantID/findings/:findingID/accept',
    {
      config: { permission: 'audit:run' },
      schema: {
        operationId: 'acceptFindingRisk',
        tags,
        summary: 'Accept the risk of one finding until expires_at',
        description:
          '201 with the acceptance; 400 reason or owner missing, expires_at past or more than 365 days out, or finding not active (resolved); 404 unknown finding; 409 already accepted, individually or through its group.',
        params: FindingParams,
        body: AcceptanceBody,
        response: withErrors({ 201: Acceptance }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await acceptances.acceptFinding(contextOf(request), request.params.findingID, request.body)),
  );

  app.delete(
    '/tenants/:tenantID/findings/:findingID/accept',
    {
      config: { permission: 'audit:run' },
      schema: {
        operationId: 'revokeFindingRisk',
        tags,
        summary: "Revoke the finding's single-finding acceptance (a group acceptance is untouched)",
        params: FindingParams,
        response: withErrors({ 200: Acceptance }, [401, 403, 404]),
      },
    },
    async (request) => acceptances.revoke(contextOf(request), 'finding', request.params.findingID),
  );

  app.post(
    '/tenants/:tenantID/findings/groups/:groupID/accept',
    {
      config: { permission: 'audit:run' },
      schema: {
        operationId: 'acceptGroupRisk',
        tags,
        summary: 'Accept the risk of a root-cause group: covers the findings present now only',
        description: '201; 400 validation; 404 unknown group or one without open findings; 409 the group has a live acceptance.',
        params: GroupParams,
        body: AcceptanceBody,
        response: withErrors({ 201: Acceptance }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await acceptances.acceptGroup(contextOf(request), request.params.groupID, request.body)),
  );

  app.delete(
    '/tenants/:tenantID/findings/groups/:groupID/accept',
    {
      config: { permission: 'audit:run' },
      schema: {
        operationId: 'revokeGroupRisk',
        tags,
        summary: "Revoke the group's acceptance (single-finding acceptances are untouched)",
        params: GroupParams,
        response: withErrors({ 200: Acceptance }, [401, 403, 404]),
      },
    },
    async (request) => acceptances.revoke(contextOf(request), 'group', request.params.groupID),
  );

  app.get(
    '/tenants/:tenantID/risk-acceptances',
    {
      config: { permission: 'findings:read' },
      schema: {
        operationId: 'listRiskAcceptances',
        tags,
        summary: 'Acceptances newest first, with counts total, active, expired, revoked and orphaned',
        params: TenantParams,
        querystring: AcceptanceListQuery,
        response: withErrors({ 200: AcceptanceList }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return acceptances.list(contextOf(request).scope, filter, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/risk-acceptances/:acceptanceID',
    {
      config: { permission: 'findings:read' },
      schema: { operationId: 'getRiskAcceptance', summary: 'A risk acceptance', tags, params: AcceptanceParams, response: withErrors({ 200: Acceptance }, [401, 403, 404]) },
    },
    async (request) => acceptances.get(contextOf(request).scope, request.params.acceptanceID),
  );
};
