import type { Static } from 'typebox';
import type { RequestContext } from '../../platform/auth/actor.js';
import { permissionsOf } from '../../platform/rbac/roles.js';
import type { Me } from './schemas.js';
import type { TokenResponse } from './tokens.js';

export type MeBody = Static<typeof Me>;

/** GET /auth/me: the caller as the authenticator resolved it. */
export function meOfContext({ actor, scope }: RequestContext): MeBody {
  return {
    auth_type: actor.type === 'user' ? 'jwt' : 'api_key',
    user_id: actor.userId,
    username: actor.type === 'user' ? actor.name : null,
    api_key_id: actor.type === 'api_key' ? actor.id : null,
    account_id: actor.accountId,
    tenant_id: scope.tenantId,
    workspace_id: scope.workspaceId,
    role: actor.role,
    permissions: [...actor.permissions].sort(),
    is_system_admin: actor.isSystemAdmin,
    expires_at: actor.tokenExpiresAt,
    mfa_enrollment_required: actor.mfaEnrollmentRequired === true,
  };
}

/**
 * The same body for tokens just issued (the session endpoints answer it instead of the tokens): what
 * GET /auth/me answers with the new access token. The issued role is already the authenticator's
 * (system-admin for platform operators, subjects.ts), so it decides the permissions and the flag.
 */
export function meOfTokens(tokens: TokenResponse): MeBody {
  return {
    auth_type: 'jwt',
    user_id: tokens.user_id,
    username: tokens.username,
    api_key_id: null,
    account_id: tokens.account_id,
    tenant_id: tokens.tenant_id,
    workspace_id: tokens.workspace_id,
    role: tokens.role,
    permissions: [...permissionsOf(tokens.role)].sort(),
    is_system_admin: tokens.role === 'system-admin',
    expires_at: tokens.expires_at,
    mfa_enrollment_required: tokens.mfa_enrollment_required,
  };
}
