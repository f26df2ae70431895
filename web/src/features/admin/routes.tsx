import type { RouteObject } from 'react-router';

/** Administration: a layout with one tab per section (/admin/users, /admin/api-keys, …), each loaded on demand. */
export const adminRoutes: RouteObject[] = [
  {
    path: 'admin',
    lazy: async () => ({ Component: (await import('./AdminLayout')).AdminLayout }),
    children: [
      { path: 'users', lazy: async () => ({ Component: (await import('./tabs/UsersTab')).UsersTab }) },
      { path: 'invitations', lazy: async () => ({ Component: (await import('./tabs/InvitationsTab')).InvitationsTab }) },
      { path: 'api-keys', lazy: async () => ({ Component: (await import('./tabs/ApiKeysTab')).ApiKeysTab }) },
      { path: 'integrations', lazy: async () => ({ Component: (await import('./tabs/IntegrationsTab')).IntegrationsTab }) },
      { path: 'sso', lazy: async () => ({ Component: (await import('./tabs/SsoTab')).SsoTab }) },
      { path: 'audit-log', lazy: async () => ({ Component: (await import('./tabs/AuditLogTab')).AuditLogTab }) },
      { path: 'discovery', lazy: async () => ({ Component: (await import('./tabs/DiscoveryTab')).DiscoveryTab }) },
      { path: 'imports', lazy: async () => ({ Component: (await import('./tabs/ImportsTab')).ImportsTab }) },
      { path: 'schedules', lazy: async () => ({ Component: (await import('./tabs/SchedulesTab')).SchedulesTab }) },
      { path: 'reports', lazy: async () => ({ Component: (await import('./tabs/ReportsTab')).ReportsTab }) },
      { path: 'security', lazy: async () => ({ Component: (await import('./tabs/TenantSecurityTab')).TenantSecurityTab }) },
    ],
  },
];
