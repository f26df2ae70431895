import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';
import { FRAMEWORK_IDS } from '../../api/frameworks';

type ListQuery = NonNullable<Paths['/api/v1/tenants/{tenantID}/rules']['get']['parameters']['query']>;
export type RuleFilter = ListQuery;
export type Rule = Paths['/api/v1/tenants/{tenantID}/rules/{ruleID}']['get']['responses'][200]['content']['application/json'];
export type RuleInput = Paths['/api/v1/tenants/{tenantID}/rules']['post']['requestBody']['content']['application/json'];
export type RuleUpdate = Paths['/api/v1/tenants/{tenantID}/rules/{ruleID}']['put']['requestBody']['content']['application/json'];
export type Framework = Rule['framework'];
export const FRAMEWORKS: Framework[] = [...FRAMEWORK_IDS];

const rulesKey = (tenantId: string) => ['rules', tenantId] as const;

export function useRules(filter: RuleFilter) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...rulesKey(tenantId), 'list', filter],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/rules', { params: { path: { tenantID: tenantId }, query: filter } })),
    placeholderData: keepPreviousData,
  });
}

export function useRule(ruleId: string | undefined) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...rulesKey(tenantId), 'one', ruleId],
    enabled: Boolean(ruleId),
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/rules/{ruleID}', { params: { path: { tenantID: tenantId, ruleID: ruleId! } } })),
  });
}

export function useSaveRule(ruleId: string | undefined) {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (input: RuleInput) => {
      if (!ruleId) return unwrap(await api.POST('/api/v1/tenants/{tenantID}/rules', { params: { path: { tenantID: tenantId } }, body: input }));
      const { id: _id, ...body } = input;
      void _id;
      return unwrap(await api.PUT('/api/v1/tenants/{tenantID}/rules/{ruleID}', { params: { path: { tenantID: tenantId, ruleID: ruleId } }, body }));
    },
    onSuccess: () => client.invalidateQueries({ queryKey: rulesKey(tenantId) }),
  });
}

export function useDeleteRule() {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (ruleId: string) => {
      const result = await api.DELETE('/api/v1/tenants/{tenantID}/rules/{ruleID}', { params: { path: { tenantID: tenantId, ruleID: ruleId } } });
      if (!result.response.ok) unwrap(result);
    },
    onSuccess: () => client.invalidateQueries({ queryKey: rulesKey(tenantId) }),
  });
}
