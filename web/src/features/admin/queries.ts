import { keepPreviousData, useMutation, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { ApiError, unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

/** Query hooks of the administration screens, one domain each; mutations invalidate their lists. */

type Query<P extends keyof Paths> = Paths[P] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;

function useInvalidating<I, O>(key: QueryKey, run: (input: I) => Promise<O>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: run, onSuccess: () => void client.invalidateQueries({ queryKey: key }) });
}

// Users and roles
export function useTenantUsers(query: Query<'/api/v1/tenants/{tenantID}/users'>) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'users', tenantId, query],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/users', { params: { path: { tenantID: tenantId }, query } })),
    placeholderData: keepPreviousData,
  });
}

export function useAddUser() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'users'], async (body: { username: string; password?: string; role: string }) => {
    const result = await api.POST('/api/v1/tenants/{tenantID}/users', { params: { path: { tenantID: tenantId } }, body });
    return { created: result.response.status === 201, data: unwrap(result) };
  });
}

export function useChangeRole() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'users'], async ({ userId, role }: { userId: string; role: string }) =>
    unwrap(await api.PUT('/api/v1/tenants/{tenantID}/users/{userID}/role', { params: { path: { tenantID: tenantId, userID: userId } }, body: { role } })),
  );
}

export function useRemoveUser() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'users'], async (userId: string) =>
    unwrap(await api.DELETE('/api/v1/tenants/{tenantID}/users/{userID}', { params: { path: { tenantID: tenantId, userID: userId } } })),
  );
}

/** An administrator's reset of a member's second factor (a lost phone). */
export function useResetUserMfa() {
  const { tenantId } = useSession();
  return useMutation({
    mutationFn: async (userId: string) => unwrap(await api.DELETE('/api/v1/tenants/{tenantID}/users/{userID}/mfa', { params: { path: { tenantID: tenantId, userID: userId } } })),
  });
}

// Invitations (created by adding a user without a password)
export function useInvitations(query: Query<'/api/v1/tenants/{tenantID}/invitations'>) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'invitations', tenantId, query],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/invitations', { params: { path: { tenantID: tenantId }, query } })),
    placeholderData: keepPreviousData,
  });
}

export function useInvite() {
  const { tenantId } = useSession();
  return useInvalidating(['admin'], async (body: { username: string; role: string }) => {
    const result = await api.POST('/api/v1/tenants/{tenantID}/users', { params: { path: { tenantID: tenantId } }, body });
    return { linked: result.response.status === 201, data: unwrap(result) };
  });
}

export function useRevokeInvitation() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'invitations'], async (invitationId: string) =>
    unwrap(await api.DELETE('/api/v1/tenants/{tenantID}/invitations/{invitationID}', { params: { path: { tenantID: tenantId, invitationID: invitationId } } })),
  );
}

export function useRoles() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'roles', tenantId],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/roles', { params: { path: { tenantID: tenantId } } })),
    staleTime: Infinity,
  });
}

// API keys
export function useApiKeys(query: Query<'/api/v1/api-keys'>) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'api-keys', tenantId, query],
    queryFn: async () => unwrap(await api.GET('/api/v1/api-keys', { params: { query } })),
    placeholderData: keepPreviousData,
  });
}

export function useCreateApiKey() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'api-keys'], async (body: { name: string; permissions: string[]; expires_at?: string; allowed_ips?: string[] }) =>
    unwrap(await api.POST('/api/v1/tenants/{tenantID}/api-keys', { params: { path: { tenantID: tenantId } }, body })),
  );
}

export function useRevokeApiKey() {
  return useInvalidating(['admin', 'api-keys'], async (id: string) => unwrap(await api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id } } })));
}

// Audit log
export function useAuditLog(query: Query<'/api/v1/tenants/{tenantID}/audit-logs'>) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'audit-log', tenantId, query],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/audit-logs', { params: { path: { tenantID: tenantId }, query } })),
    placeholderData: keepPreviousData,
  });
}

// Integrations and their deliveries
export function useIntegrations(query: Query<'/api/v1/tenants/{tenantID}/integrations'>) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'integrations', tenantId, query],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/integrations', { params: { path: { tenantID: tenantId }, query } })),
    placeholderData: keepPreviousData,
  });
}

export type IntegrationCreateBody = Paths['/api/v1/tenants/{tenantID}/integrations']['post']['requestBody']['content']['application/json'];
export type IntegrationUpdateBody = Paths['/api/v1/tenants/{tenantID}/integrations/{integrationID}']['put']['requestBody']['content']['application/json'];

export function useCreateIntegration() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'integrations'], async (body: IntegrationCreateBody) =>
    unwrap(await api.POST('/api/v1/tenants/{tenantID}/integrations', { params: { path: { tenantID: tenantId } }, body })),
  );
}

export function useUpdateIntegration() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'integrations'], async ({ id, body }: { id: string; body: IntegrationUpdateBody }) =>
    unwrap(await api.PUT('/api/v1/tenants/{tenantID}/integrations/{integrationID}', { params: { path: { tenantID: tenantId, integrationID: id } }, body })),
  );
}

export function useDeliveries(integrationId: string | null, query: Query<'/api/v1/tenants/{tenantID}/integrations/{integrationID}/deliveries'>) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'deliveries', tenantId, integrationId, query],
    enabled: Boolean(integrationId),
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/tenants/{tenantID}/integrations/{integrationID}/deliveries', {
          params: { path: { tenantID: tenantId, integrationID: integrationId! }, query },
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

export function useRedeliver() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'deliveries'], async ({ integrationId, deliveryId }: { integrationId: string; deliveryId: string }) =>
    unwrap(
      await api.POST('/api/v1/tenants/{tenantID}/integrations/{integrationID}/deliveries/{deliveryID}/retry', {
        params: { path: { tenantID: tenantId, integrationID: integrationId, deliveryID: deliveryId } },
      }),
    ),
  );
}

export function useTestIntegration() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'deliveries'], async (integrationId: string) =>
    unwrap(await api.POST('/api/v1/tenants/{tenantID}/integrations/{integrationID}/test', { params: { path: { tenantID: tenantId, integrationID: integrationId } } })),
  );
}

// SSO
export function useSsoConfig() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'sso', tenantId],
    // 404 means "not configured", an ordinary state of the screen rather than an error.
    queryFn: async () => {
      const result = await api.GET('/api/v1/tenants/{tenantID}/sso', { params: { path: { tenantID: tenantId } } });
      if (result.response.status === 404) return null;
      return unwrap(result);
    },
  });
}

export type SsoBody = Paths['/api/v1/tenants/{tenantID}/sso']['put']['requestBody']['content']['application/json'];

export function useSaveSso() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'sso'], async (body: SsoBody) => unwrap(await api.PUT('/api/v1/tenants/{tenantID}/sso', { params: { path: { tenantID: tenantId } }, body })));
}

export function useDeleteSso() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'sso'], async () => unwrap(await api.DELETE('/api/v1/tenants/{tenantID}/sso', { params: { path: { tenantID: tenantId } } })));
}

export function useTestSso() {
  const { tenantId } = useSession();
  return useMutation({ mutationFn: async () => unwrap(await api.POST('/api/v1/tenants/{tenantID}/sso/test', { params: { path: { tenantID: tenantId } } })) });
}

// Discovery jobs
export function useDiscoveryJobs(query: Query<'/api/v1/tenants/{tenantID}/jobs'>) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'jobs', tenantId, query],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/jobs', { params: { path: { tenantID: tenantId }, query } })),
    placeholderData: keepPreviousData,
    // Follow running jobs: poll while any is not finished.
    refetchInterval: (q) => (q.state.data?.items.some((job) => ['pending', 'queued', 'running'].includes(job.status)) ? 3000 : false),
  });
}

export type JobBody = Paths['/api/v1/tenants/{tenantID}/jobs']['post']['requestBody']['content']['application/json'];

export function useCreateJob() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'jobs'], async (body: JobBody) => unwrap(await api.POST('/api/v1/tenants/{tenantID}/jobs', { params: { path: { tenantID: tenantId } }, body })));
}

export function useCancelJob() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'jobs'], async (jobId: string) =>
    unwrap(await api.POST('/api/v1/tenants/{tenantID}/jobs/{jobID}/cancel', { params: { path: { tenantID: tenantId, jobID: jobId } } })),
  );
}

// Reports
export function useReports(query: Query<'/api/v1/tenants/{tenantID}/reports'>) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'reports', tenantId, query],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/reports', { params: { path: { tenantID: tenantId }, query } })),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some((report) => ['queued', 'running'].includes(report.status)) ? 3000 : false),
  });
}

export function useGenerateReport() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'reports'], async (body: { format: 'pdf' | 'json' | 'csv'; framework?: string }) =>
    unwrap(await api.POST('/api/v1/tenants/{tenantID}/reports/generate', { params: { path: { tenantID: tenantId } }, body: { type: 'compliance', ...body } })),
  );
}

// The tenant's multi-factor requirement
export function useTenantMfaSetting() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'mfa-setting', tenantId],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/settings/mfa', { params: { path: { tenantID: tenantId } } })),
  });
}

export function useSetTenantMfa() {
  const { tenantId } = useSession();
  return useInvalidating(['admin', 'mfa-setting'], async (required: boolean) =>
    unwrap(await api.PUT('/api/v1/tenants/{tenantID}/settings/mfa', { params: { path: { tenantID: tenantId } }, body: { mfa_required: required } })),
  );
}

export { ApiError };
