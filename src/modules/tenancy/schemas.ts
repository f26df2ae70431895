import { Type } from 'typebox';
import { Nullable, Paged, StringEnum, Timestamp, Uuid, AnyObject, PageNumber } from '../../platform/http/schemas.js';
import { ROLES, ALL_PERMISSIONS } from '../../platform/rbac/roles.js';
import { SLUG_PATTERN } from './slug.js';
import { USERNAME_PATTERN } from './user-service.js';

export const RoleName = StringEnum(ROLES);
export const PlanName = StringEnum(['free', 'pro', 'enterprise'] as const);

export const TokenResponse = Type.Object(
  {
    token: Type.String({ description: 'JWT access token (HS256)' }),
    refresh_token: Type.String({ description: 'Opaque, single-use refresh token' }),
    expires_at: Timestamp,
    refresh_expires_at: Timestamp,
    user_id: Uuid,
    username: Type.String(),
    account_id: Uuid,
    tenant_id: Uuid,
    workspace_id: Uuid,
    role: RoleName,
    onboarding_completed: Type.Boolean(),
    mfa_enrollment_required: Type.Boolean({
      description:
        'The tenant requires multi-factor sign-in and this session was opened with a password alone: the token only reaches ' +
        'GET /auth/me, the /auth/mfa enrollment endpoints and logout (403 MFA_ENROLLMENT_REQUIRED elsewhere) until the user ' +
        'enrolls and signs in again with a code',
    }),
  },
  { description: 'The token response of login, refresh, select-tenant and switch-workspace' },
);

export const LoginBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 200 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    otp: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "For accounts with multi-factor sign-in: the authenticator's current 6-digit code or an unused recovery code",
      }),
    ),
  },
  { additionalProperties: false },
);
export const RefreshBody = Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false });
export const SelectTenantBody = Type.Object({ tenant_id: Uuid }, { additionalProperties: false });
export const SwitchWorkspaceBody = Type.Object({ workspace_id: Uuid }, { additionalProperties: false });

export const Me = Type.Object({
  auth_type: StringEnum(['jwt', 'api_key'] as const),
  user_id: Nullable(Uuid),
  username: Nullable(Type.String()),
  api_key_id: Nullable(Uuid),
  account_id: Uuid,
  tenant_id: Uuid,
  workspace_id: Uuid,
  role: Nullable(RoleName),
  permissions: Type.Array(Type.String()),
  is_system_admin: Type.Boolean(),
  expires_at: Nullable(Timestamp),
  mfa_enrollment_required: Type.Boolean({
    description: 'The tenant requires multi-factor sign-in and this session has none: only enrollment (/auth/mfa) and logout work until the user enrolls and signs in again',
  }),
});

export const Tenant = Type.Object({
  id: Uuid,
  account_id: Uuid,
  name: Type.String(),
  slug: Type.String(),
  plan: PlanName,
  onboarding_completed: Type.Boolean(),
  default_workspace_id: Nullable(Uuid),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const TenantCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    slug: Type.Optional(Type.String({ pattern: SLUG_PATTERN })),
    plan: Type.Optional(PlanName),
  },
  { additionalProperties: false },
);
export const TenantUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    slug: Type.Optional(Type.String({ pattern: SLUG_PATTERN })),
    plan: Type.Optional(PlanName),
    onboarding_completed: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const Workspace = Type.Object({
  id: Uuid,
  tenant_id: Uuid,
  name: Type.String(),
  is_default: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const WorkspaceBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const TenantUser = Type.Object({ id: Uuid, username: Type.String(), role: RoleName, created_at: Timestamp });
export const UserCreate = Type.Object(
  {
    username: Type.String({ pattern: USERNAME_PATTERN }),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    role: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export const Invitation = Type.Object(
  {
    id: Uuid,
    tenant_id: Uuid,
    tenant_name: Type.String(),
    tenant_slug: Type.String(),
    username: Type.String({ description: 'The invited username, as given' }),
    role: RoleName,
    status: StringEnum(['pending', 'accepted', 'declined', 'revoked', 'expired'] as const),
    invited_by: Type.String({ description: 'Username (or API key name) of who invited' }),
    created_at: Timestamp,
    expires_at: Timestamp,
    responded_at: Nullable(Timestamp),
  },
  { description: 'An invitation into a tenant, accepted or declined by the invited user after signing in' },
);
export const InvitationParams = Type.Object({ invitationID: Uuid });
export const TenantInvitationParams = Type.Object({ tenantID: Uuid, invitationID: Uuid });
export const RoleChangeBody = Type.Object({ role: Type.Optional(Nullable(Type.String())) }, { additionalProperties: false });
export const RoleChangeResult = Type.Object({
  id: Uuid,
  username: Type.String(),
  role: RoleName,
  previous_role: RoleName,
  created_at: Timestamp,
});
export const RoleInfo = Type.Object({ role: RoleName, permissions: Type.Array(Type.String()), level: Type.Integer() });

const KeyPermission = Type.String({
  description: `A key permission (nodes:read, nodes:write, findings:read, findings:write, jobs:read, jobs:write, reports:read, agents:write, admin:*) or a role permission (${ALL_PERMISSIONS.filter((p) => p !== 'platform:admin').join(', ')})`,
});
export const ApiKeyCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    tenants: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: 100 })),
    permissions: Type.Array(KeyPermission, { minItems: 1, maxItems: 100 }),
    expires_at: Type.Optional(Type.String({ format: 'date-time' })),
    workspace_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
export const TenantApiKeyCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    permissions: Type.Array(KeyPermission, { minItems: 1, maxItems: 100 }),
    expires_at: Type.Optional(Type.String({ format: 'date-time' })),
    allowed_ips: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })),
    workspace_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
const apiKeyFields = {
  id: Uuid,
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key' }),
  tenants: Type.Array(Uuid),
  workspace_id: Nullable(Uuid),
  permissions: Type.Array(Type.String()),
  allowed_ips: Type.Array(Type.String()),
  expires_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
  last_used_at: Nullable(Timestamp),
  created_at: Timestamp,
  created_by: Nullable(Uuid),
};
export const ApiKey = Type.Object(apiKeyFields);
export const CreatedApiKey = Type.Object({ ...apiKeyFields, key: Type.String({ description: 'The key; shown only in this response' }) });

export const AuditLogEntry = Type.Object({
  id: Uuid,
  action: Type.String(),
  actor_type: StringEnum(['user', 'api_key', 'system', 'respondent_link'] as const),
  actor_id: Nullable(Uuid),
  actor_name: Type.String(),
  target_type: Nullable(Type.String()),
  target_id: Nullable(Type.String()),
  details: AnyObject,
  workspace_id: Nullable(Uuid),
  ip: Nullable(Type.String()),
  request_id: Nullable(Type.String()),
  created_at: Timestamp,
});
export const AuditLogQuery = Type.Object({
  action: Type.Optional(Type.String({ maxLength: 100, description: 'exact action, or a prefix ending in * (e.g. user.*)' })),
  actor_id: Type.Optional(Uuid),
  actor_type: Type.Optional(StringEnum(['user', 'api_key', 'system', 'respondent_link'] as const)),
  target_type: Type.Optional(Type.String({ maxLength: 100 })),
  target_id: Type.Optional(Type.String({ maxLength: 300 })),
  since: Type.Optional(Type.String({ format: 'date-time' })),
  until: Type.Optional(Type.String({ format: 'date-time' })),
  page: PageNumber,
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

export const TenantUserParams = Type.Object({ tenantID: Uuid, userID: Uuid });
export const IdParams = Type.Object({ id: Uuid });

export { Paged };
