import { lookupTable } from '../lookup-table.js';
/**
 * Roles and their fixed permissions (RBAC is data). read-only and auditor are exactly the spec's
 * lists; the higher roles are supersets covering every permission the routes declare.
 */
export const ROLES = ['read-only', 'auditor', 'security-analyst', 'tenant-admin', 'system-admin'] as const;
export type Role = (typeof ROLES)[number];

export const ROLE_LEVEL: Record<Role, number> = {
  'read-only': 1,
  auditor: 2,
  'security-analyst': 3,
  'tenant-admin': 4,
  'system-admin': 5,
};

const READ_ONLY = ['tenant:read', 'nodes:read', 'jobs:read', 'findings:read', 'evidence:read', 'poam:read', 'questionnaire:read', 'assessment:read', 'rules:read'] as const;

const AUDITOR = [...READ_ONLY, 'logs:read', 'conmon:read', 'attestation_evidence:read'] as const;

const SECURITY_ANALYST = [
  ...AUDITOR,
  'nodes:write',
  'jobs:write',
  'findings:write',
  'audit:run',
  'rules:write',
  'evidence:write',
  'poam:write',
  'questionnaire:write',
  'assessment:review',
  'attestation_evidence:write',
  'reports:read',
  'reports:write',
  'applications:write',
] as const;

const TENANT_ADMIN = [...SECURITY_ANALYST, 'tenant:update', 'tenant:delete', 'tenants:create', 'roles:manage', 'api_keys:manage', 'agents:write'] as const;

const SYSTEM_ADMIN = [...TENANT_ADMIN, 'platform:admin'] as const;

export const ALL_PERMISSIONS = SYSTEM_ADMIN;
export type Permission = (typeof ALL_PERMISSIONS)[number];

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  'read-only': READ_ONLY,
  auditor: AUDITOR,
  'security-analyst': SECURITY_ANALYST,
  'tenant-admin': TENANT_ADMIN,
  'system-admin': SYSTEM_ADMIN,
};

const permissionSets = new Map<Role, ReadonlySet<string>>(ROLES.map((role) => [role, new Set<string>(ROLE_PERMISSIONS[role])]));

export function permissionsOf(role: Role): ReadonlySet<string> {
  return permissionSets.get(role)!;
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/**
 * API key permission names of the spec, and what each grants in role-permission terms. A key may
 * also carry role permission strings directly (e.g. poam:read). admin:* grants what a tenant-admin has.
 */
export const KEY_PERMISSION_GRANTS: Record<string, readonly Permission[]> = lookupTable({
  'nodes:read': ['nodes:read'],
  'nodes:write': ['nodes:write'],
  'findings:read': ['findings:read', 'rules:read'],
  // The spec: findings:write covers accepting risk (audit:run) and resolving.
  'findings:write': ['findings:write', 'audit:run'],
  'jobs:read': ['jobs:read'],
  'jobs:write': ['jobs:write'],
  // The spec: reports:read covers generating and downloading.
  'reports:read': ['reports:read', 'reports:write'],
  'agents:write': ['agents:write'],
  'admin:*': TENANT_ADMIN,
});

/** The role permissions an API key's declared permissions grant, or null naming an unknown one. */
export function expandKeyPermissions(declared: string[]): { granted: Set<string>; unknown: string[] } {
  const granted = new Set<string>();
  const unknown: string[] = [];
  for (const name of declared) {
    const grants = KEY_PERMISSION_GRANTS[name] ?? ((ALL_PERMISSIONS as readonly string[]).includes(name) && name !== 'platform:admin' ? [name] : null);
    if (!grants) unknown.push(name);
    else for (const p of grants) granted.add(p);
  }
  return { granted, unknown };
}
