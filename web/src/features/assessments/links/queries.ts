import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Paths } from '../../../api/client';
import { unwrap } from '../../../api/errors';
import { useSession } from '../../../session/session';
import { assessmentsKey } from '../queries';

type LinksPath = Paths['/api/v1/tenants/{tenantID}/assessments/{aID}/links'];
export type RespondentLink = LinksPath['get']['responses'][200]['content']['application/json']['items'][number];
export type NewLink = NonNullable<LinksPath['post']['requestBody']>['content']['application/json'];
export type CreatedLink = LinksPath['post']['responses'][201]['content']['application/json'];

const linksKey = (tenantId: string, assessmentId: string) => [...assessmentsKey, 'links', tenantId, assessmentId] as const;

/** An assessment's links for outside respondents, newest first (never their tokens). */
export function useRespondentLinks(assessmentId: string, page: number) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...linksKey(tenantId, assessmentId), page],
    placeholderData: keepPreviousData,
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/tenants/{tenantID}/assessments/{aID}/links', { params: { path: { tenantID: tenantId, aID: assessmentId }, query: { page, per_page: 20 } } })),
  });
}

export function useCreateLink(assessmentId: string) {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (body: NewLink) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/assessments/{aID}/links', { params: { path: { tenantID: tenantId, aID: assessmentId } }, body })),
    onSuccess: () => client.invalidateQueries({ queryKey: linksKey(tenantId, assessmentId) }),
  });
}

export function useRevokeLink(assessmentId: string) {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (linkId: string) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/assessments/{aID}/links/{linkID}/revoke', { params: { path: { tenantID: tenantId, aID: assessmentId, linkID: linkId } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: linksKey(tenantId, assessmentId) }),
  });
}

/**
 * The address to hand the respondent: the service's (CONTROLGRAPH_PUBLIC_URL) when it has one, else
 * this console's own origin, which is where the person creating the link reached the service.
 */
export function linkAddress(created: CreatedLink): string | null {
  if (created.url) return created.url;
  return created.token ? `${window.location.origin}/respond#${created.token}` : null;
}
