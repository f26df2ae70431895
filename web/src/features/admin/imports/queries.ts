import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Paths } from '../../../api/client';
import { unwrap } from '../../../api/errors';
import { useSession } from '../../../session/session';

type ListQuery = NonNullable<Paths['/api/v1/tenants/{tenantID}/imports']['get']['parameters']['query']>;
export type ImportRow = Paths['/api/v1/tenants/{tenantID}/imports/{importID}']['get']['responses'][200]['content']['application/json'];
export type ImportStatus = ImportRow['status'];
export type ImportFormat = ImportRow['format'];

export const IMPORT_STATUSES: ImportStatus[] = ['queued', 'running', 'succeeded', 'failed'];
export const IMPORT_FORMATS: ImportFormat[] = ['prowler-ocsf', 'prowler-asff', 'securityhub-asff', 'sarif', 'aws-config'];

/** An import still has work ahead of it while queued or running. */
export const inProgress = (status: ImportStatus) => status === 'queued' || status === 'running';

const importsKey = ['admin', 'imports'] as const;

/** The workspace's scanner imports, newest first; followed while any of the page is still in progress. */
export function useImports(query: ListQuery) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...importsKey, 'list', tenantId, query],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/imports', { params: { path: { tenantID: tenantId }, query } })),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some((item) => inProgress(item.status)) ? 3000 : false),
  });
}

/** One import, polled until it has finished (its counts grow as the job reads the file). */
export function useImport(id: string) {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useQuery({
    queryKey: [...importsKey, 'one', tenantId, id],
    queryFn: async () => {
      const row = unwrap(await api.GET('/api/v1/tenants/{tenantID}/imports/{importID}', { params: { path: { tenantID: tenantId, importID: id } } }));
      // The list shows the same import: refresh it when this one has finished.
      if (!inProgress(row.status)) void client.invalidateQueries({ queryKey: [...importsKey, 'list'] });
      return row;
    },
    refetchInterval: (q) => (q.state.data && !inProgress(q.state.data.status) ? false : 1000),
  });
}

/** Uploads a scanner's output (multipart: the optional format first, then the file). */
export function useUploadImport() {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({ file, format }: { file: File; format: ImportFormat | null }) => {
      const form = new FormData();
      // The service reads the parts in order: the format must precede the file.
      if (format) form.append('format', format);
      form.append('file', file, file.name);
      return unwrap(
        await api.POST('/api/v1/tenants/{tenantID}/imports', {
          params: { path: { tenantID: tenantId } },
          // openapi-fetch sends FormData as is, with the browser's multipart boundary.
          body: form as never,
        }),
      );
    },
    onSuccess: () => void client.invalidateQueries({ queryKey: [...importsKey, 'list'] }),
  });
}

/** Usernames by user id, to show who started an import (`created_by` is `user:<id>` or `api_key:<id>`). */
export function useUsernames() {
  const { tenantId, can } = useSession();
  return useQuery({
    queryKey: ['admin', 'users', tenantId, 'names'],
    enabled: can('tenant:read'),
    queryFn: async () => {
      const page = unwrap(await api.GET('/api/v1/tenants/{tenantID}/users', { params: { path: { tenantID: tenantId }, query: { per_page: 500 } } }));
      return new Map(page.items.map((user) => [user.id, user.username]));
    },
    staleTime: 60_000,
  });
}
