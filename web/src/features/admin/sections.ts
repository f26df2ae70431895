/**
 * The administration sections, each in the URL (/admin/<path>) and shown only when the role may read
 * what it shows (the permission of its GET routes); write actions inside check their own permission.
 */
export const SECTIONS = [
  { path: 'users', key: 'users', permission: 'tenant:read' },
  { path: 'invitations', key: 'invitations', permission: 'roles:manage' },
  { path: 'api-keys', key: 'apiKeys', permission: 'api_keys:manage' },
  { path: 'integrations', key: 'integrations', permission: 'tenant:read' },
  { path: 'sso', key: 'sso', permission: 'tenant:read' },
  { path: 'audit-log', key: 'auditLog', permission: 'logs:read' },
  { path: 'discovery', key: 'discovery', permission: 'jobs:read' },
  { path: 'imports', key: 'imports', permission: 'jobs:read' },
  { path: 'schedules', key: 'schedules', permission: 'jobs:read' },
  { path: 'reports', key: 'reports', permission: 'reports:read' },
  { path: 'security', key: 'security', permission: 'tenant:read' },
] as const;
