import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { Paged, PageQuery, TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createInvitationService } from './invitation-service.js';
import { Invitation, InvitationParams, TenantInvitationParams } from './schemas.js';

/**
 * Invitations into a tenant: the tenant's admins list and withdraw them; the invited user lists
 * theirs and accepts or declines. They are created by POST /tenants/{tenantID}/users without a password.
 */
export const invitationRoutes: RoutePlugin = async (app, { deps }) => {
  const invitations = createInvitationService(deps);

  app.get(
    '/tenants/:tenantID/invitations',
    {
      config: { permission: 'roles:manage' },
      schema: {
        operationId: 'listTenantInvitations',
        tags: ['users'],
        summary: "The tenant's invitations, newest first (an open one past its expiry reads as expired)",
        params: TenantParams,
        querystring: Type.Object(PageQuery),
        response: withErrors({ 200: Paged(Invitation) }, [401, 403]),
      },
    },
    async (request) => invitations.listForTenant(contextOf(request), pageRequest(request.query)),
  );

  app.delete(
    '/tenants/:tenantID/invitations/:invitationID',
    {
      config: { permission: 'roles:manage' },
      schema: {
        operationId: 'revokeTenantInvitation',
        tags: ['users'],
        summary: 'Withdraw an open invitation (409 once it was answered)',
        params: TenantInvitationParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => {
      await invitations.revoke(contextOf(request), request.params.invitationID);
      return reply.status(204).send();
    },
  );

  app.get(
    '/account/invitations',
    {
      schema: {
        operationId: 'listMyInvitations',
        tags: ['users'],
        summary: "The signed-in user's open invitations into other tenants, newest first",
        querystring: Type.Object(PageQuery),
        response: withErrors({ 200: Paged(Invitation) }, [401, 403]),
      },
    },
    async (request) => invitations.listMine(contextOf(request), pageRequest(request.query)),
  );

  for (const [action, accept] of [
    ['accept', true],
    ['decline', false],
  ] as const) {
    app.post(
      `/account/invitations/:invitationID/${action}`,
      {
        config: { bodyless: true },
        schema: {
          operationId: accept ? 'acceptInvitation' : 'declineInvitation',
          tags: ['users'],
          summary: accept ? 'Accept an invitation: the membership is created with its role (then POST /auth/select-tenant to work there)' : 'Decline an invitation',
          description: '404 for an invitation that is not yours, 409 once answered or withdrawn, 410 after it expired.',
          params: InvitationParams,
          response: withErrors({ 200: Invitation }, [401, 403, 404, 409, 410]),
        },
      },
      async (request) => (accept ? invitations.accept : invitations.decline)(contextOf(request), request.params.invitationID),
    );
  }
};
