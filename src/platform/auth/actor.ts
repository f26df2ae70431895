import type { Role } from '../rbac/roles.js';
import type { Scope } from '../db/scope.js';

/** Who is making a request, resolved once per request by the authenticator. */
export interface Actor {
  type: 'user' | 'api_key';
  /** The user id, or the API key id. */
  id: string;
  userId: string | null;
  /** Username, or the API key's name: what audit logs show. */
  name: string;
  accountId: string;
  /** The tenant and workspace the credential is bound to (the token's claims). */
  tenantId: string;
  workspaceId: string;
  /** The role in the request's tenant (null for API keys). */
  role: Role | null;
  level: number;
  permissions: ReadonlySet<string>;
  isSystemAdmin: boolean;
  sessionId: string | null;
  jti: string | null;
  tokenExpiresAt: Date | null;
  /** Tenants an API key may act in. */
  keyTenantIds: string[] | null;
  /**
   * A password-only session in a tenant that requires multi-factor sign-in: it may only enroll an
   * authenticator (routes with `duringMfaEnrollment`). Absent for API keys.
   */
  mfaEnrollmentRequired?: boolean;
}

export interface RequestContext {
  actor: Actor;
  /** The data scope of the request: the path's tenant (or the token's), the token's workspace. */
  scope: Scope;
  ip: string;
  requestId: string;
}
