import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

type ListQuery = NonNullable<Paths['/api/v1/tenants/{tenantID}/risk-acceptances']['get']['parameters']['query']>;
export type AcceptanceStateFilter = NonNullable<ListQuery['state']>;
export type AcceptanceScope = NonNullable<ListQuery['scope']>;
export type Acceptance = Paths['/api/v1/tenants/{tenantID}/risk-acceptances/{acceptanceID}']['get']['responses'][200]['content']['application/json'];

export const STATE_FILTERS: AcceptanceStateFilter[] = ['active', 'partial', 'expired', 'revoked', 'orphaned'];

export const riskKey = ['risk-acceptances'] as const;

export interface AcceptancesFilter {
  state?: AcceptanceStateFilter;
  scope?: AcceptanceScope;
  owner?: string;
  page: number;
  per_page: number;
}

/** Acceptances newest first, with the five counts of the workspace. */
export function useAcceptances(filter: AcceptancesFilter) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...riskKey, 'list', tenantId, filter],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/risk-acceptances', { params: { path: { tenantID: tenantId }, query: filter } })),
  });
}

export function useAcceptance(id: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...riskKey, 'one', tenantId, id],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/risk-acceptances/{acceptanceID}', { params: { path: { tenantID: tenantId, acceptanceID: id } } })),
  });
}

/**
 * Revoking goes through the finding or the group it was made for (there is no revoke by acceptance
 * id); the findings it covered become active again, so findings and scores go stale too.
 */
export function useRevokeAcceptance() {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (acceptance: Pick<Acceptance, 'scope' | 'finding_id' | 'group_id'>) => {
      if (acceptance.scope === 'finding' && acceptance.finding_id) {
        return unwrap(await api.DELETE('/api/v1/tenants/{tenantID}/findings/{findingID}/accept', { params: { path: { tenantID: tenantId, findingID: acceptance.finding_id } } }));
      }
      return unwrap(await api.DELETE('/api/v1/tenants/{tenantID}/findings/groups/{groupID}/accept', { params: { path: { tenantID: tenantId, groupID: acceptance.group_id } } }));
    },
    onSuccess: () => client.invalidateQueries({ predicate: (query) => query.queryKey[0] !== 'me' }),
  });
}
