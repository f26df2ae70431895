import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import { ApiError, unwrap } from '../api/errors';

export const meKey = ['me'] as const;

/** The current session, or null when there is none (401). */
export const meQuery = queryOptions({
  queryKey: meKey,
  queryFn: async () => {
    const result = await api.GET('/api/v1/auth/me');
    if (result.response.status === 401) return null;
    return unwrap(result);
  },
  staleTime: 60_000,
  retry: false,
});

export function useMe() {
  return useQuery(meQuery);
}

/**
 * Ends the session and loads the sign-in page afresh. A full page load, not a route change: it wipes
 * every cached answer from memory, and no query of the page being left can still come back with a
 * 401, read as an expired session that would send the browser to sign-in with next= that page.
 */
export function useSignOut() {
  return useMutation({
    mutationFn: async () => {
      const result = await api.DELETE('/api/v1/auth/session');
      if (!result.response.ok && result.response.status !== 401) unwrap(result);
    },
    onSettled: () => window.location.replace('/sign-in'),
  });
}

/** Switching tenant or workspace changes every answer: the whole cache goes. */
export function useSwitchScope() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (target: { tenantId?: string; workspaceId?: string }) => {
      if (target.tenantId) return unwrap(await api.POST('/api/v1/auth/session/tenant', { body: { tenant_id: target.tenantId } }));
      if (target.workspaceId) return unwrap(await api.POST('/api/v1/auth/session/workspace', { body: { workspace_id: target.workspaceId } }));
      throw new ApiError(400, 'BAD_REQUEST', 'nothing to switch to');
    },
    onSuccess: (me) => {
      client.clear();
      client.setQueryData(meKey, me);
    },
  });
}
