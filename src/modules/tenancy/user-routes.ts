import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { Paged, PageQuery, TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createUserService, rolesList } from './user-service.js';
import { Invitation, RoleChangeBody, RoleChangeResult, RoleInfo, TenantUser, TenantUserParams, UserCreate } from './schemas.js';

/** Users of a tenant, the fixed roles, and role changes with the spec's guard rails. */
export const userRoutes: RoutePlugin = async (app, { deps }) => {
  const users = createUserService(deps);

  app.get(
    '/tenants/:tenantID/roles',
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'listRoles',
        tags: ['users'],
        summary: 'The five roles with their levels and fixed permissions (an array)',
        params: TenantParams,
        response: withErrors({ 200: Type.Array(RoleInfo) }, [401, 403]),
      },
    },
    async () => rolesList(),
  );

  app.get(
    '/tenants/:tenantID/users',
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'listTenantUsers',
        summary: 'Members of the tenant with their roles',
        tags: ['users'],
        params: TenantParams,
        querystring: Type.Object(PageQuery),
        response: withErrors({ 200: Paged(TenantUser) }, [401, 403]),
      },
    },
    async (request) => users.list(contextOf(request), pageRequest(request.query)),
  );

  app.post(
    '/tenants/:tenantID/users',
    {
      config: { permission: 'roles:manage' },
      schema: {
        operationId: 'addTenantUser',
        tags: ['users'],
        summary: 'Create a user in the tenant (with a password), or invite a username (without one)',
        description:
          'With a password a new user is created (201; a taken username is 409). Without one, a system-admin links the existing user ' +
          'at once (201); anyone else invites the username (202 with the invitation), answered alike whether or not the username exists. ' +
          'The user accepts or declines after signing in (POST /account/invitations/{invitationID}/accept).',
        params: TenantParams,
        body: UserCreate,
        response: withErrors({ 201: TenantUser, 202: Invitation }, [401, 403, 409]),
      },
    },
    async (request, reply) => {
      const result = await users.add(contextOf(request), request.body);
      return 'user' in result ? reply.status(201).send(result.user) : reply.status(202).send(result.invitation);
    },
  );

  app.delete(
    '/tenants/:tenantID/users/:userID',
    {
      config: { permission: 'roles:manage' },
      schema: {
        operationId: 'removeTenantUser',
        tags: ['users'],
        summary: 'Remove the user from the tenant (the user itself remains)',
        params: TenantUserParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404]),
      },
    },
    async (request, reply) => {
      await users.remove(contextOf(request), request.params.userID);
      return reply.status(204).send();
    },
  );

  app.delete(
    '/tenants/:tenantID/users/:userID/mfa',
    {
      config: { permission: 'roles:manage' },
      schema: {
        operationId: 'resetTenantUserMfa',
        tags: ['users'],
        summary: "Reset a member's multi-factor sign-in (a lost phone): removes the authenticator and the recovery codes",
        description:
          'The user signs in with the password alone afterwards and enrolls again (at once when the tenant requires it). ' +
          'Audit-logged (user.mfa_reset). 403 for an API key, for your own account (turn it off with a code: DELETE /auth/mfa/totp), ' +
          'for a member above your role or a system-admin, and for a user who also belongs to other tenants unless you are a system-admin ' +
          '(the second factor guards all of their tenants); 404 for a user who is not a member of this tenant; 409 when the user has no second factor.',
        params: TenantUserParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => {
      await users.resetMfa(contextOf(request), request.params.userID);
      return reply.status(204).send();
    },
  );

  app.put(
    '/tenants/:tenantID/users/:userID/role',
    {
      config: { permission: 'roles:manage' },
      schema: {
        operationId: 'changeUserRole',
        tags: ['users'],
        summary: "Change a user's role in the tenant (audit-logged with previous and new role)",
        params: TenantUserParams,
        body: RoleChangeBody,
        response: withErrors({ 200: RoleChangeResult }, [401, 403]),
      },
    },
    async (request) => users.changeRole(contextOf(request), request.params.userID, request.body.role ?? undefined),
  );
};
