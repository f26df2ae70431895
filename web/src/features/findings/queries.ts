import { keepPreviousData, queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { ApiError, unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

type Tenant = '/api/v1/tenants/{tenantID}';
export type FindingsQuery = NonNullable<Paths[`${Tenant}/findings`]['get']['parameters']['query']>;
export type ScoredQuery = NonNullable<Paths[`${Tenant}/findings/scored`]['get']['parameters']['query']>;
export type GroupsQuery = NonNullable<Paths[`${Tenant}/findings/grouped`]['get']['parameters']['query']>;
export type Finding = Paths[`${Tenant}/findings/{findingID}`]['get']['responses'][200]['content']['application/json'];
export type ScoredFinding = Paths[`${Tenant}/findings/scored`]['get']['responses'][200]['content']['application/json']['items'][number];
export type FindingGroup = Paths[`${Tenant}/findings/grouped`]['get']['responses'][200]['content']['application/json']['items'][number];
export type Acceptance = Paths[`${Tenant}/risk-acceptances`]['get']['responses'][200]['content']['application/json']['items'][number];
export interface AcceptInput {
  owner: string;
  reason: string;
  expires_at: string;
}

/**
 * Every key starts with 'findings' so one invalidation after a write refreshes lists, scores and
 * details; 'controls' (the score) and 'risk-acceptances' are invalidated beside it.
 */
export const findingsKeys = {
  all: ['findings'] as const,
  list: (query: FindingsQuery) => ['findings', 'list', query] as const,
  scored: (query: ScoredQuery) => ['findings', 'scored', query] as const,
  grouped: (query: GroupsQuery) => ['findings', 'grouped', query] as const,
  detail: (id: string) => ['findings', 'detail', id] as const,
  remediation: (id: string) => ['findings', 'remediation', id] as const,
  patch: (id: string) => ['findings', 'terraform-patch', id] as const,
  acceptance: (id: string) => ['findings', 'acceptance', id] as const,
};

export const findingsListQuery = (tenantId: string, query: FindingsQuery) =>
  queryOptions({
    queryKey: findingsKeys.list(query),
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/findings', { params: { path: { tenantID: tenantId }, query } })),
  });

export function useFindings(query: FindingsQuery, enabled = true) {
  const { tenantId } = useSession();
  return useQuery({ ...findingsListQuery(tenantId, query), placeholderData: keepPreviousData, enabled });
}

export function useScoredFindings(query: ScoredQuery, enabled = true) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: findingsKeys.scored(query),
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/findings/scored', { params: { path: { tenantID: tenantId }, query } })),
    placeholderData: keepPreviousData,
    enabled,
  });
}

export function useFindingGroups(query: GroupsQuery, enabled = true) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: findingsKeys.grouped(query),
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/findings/grouped', { params: { path: { tenantID: tenantId }, query } })),
    placeholderData: keepPreviousData,
    enabled,
  });
}

export function useFinding(findingId: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: findingsKeys.detail(findingId),
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/findings/{findingID}', { params: { path: { tenantID: tenantId, findingID: findingId } } })),
  });
}

export function useRemediation(findingId: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: findingsKeys.remediation(findingId),
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/findings/{findingID}/remediation', { params: { path: { tenantID: tenantId, findingID: findingId } } })),
  });
}

/** Asked for only when the remediation says a patch exists (otherwise the API answers 404). */
export function useTerraformPatch(findingId: string, enabled: boolean) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: findingsKeys.patch(findingId),
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/tenants/{tenantID}/findings/{findingID}/terraform-patch', { params: { path: { tenantID: tenantId, findingID: findingId } } })),
    enabled,
    retry: false,
  });
}

/**
 * The live acceptance covering an accepted finding, single or through its group. The API has no
 * filter by finding, so the live acceptances of the workspace (at most 500) are searched.
 */
export function useAcceptanceOf(finding: Finding | undefined) {
  const { tenantId } = useSession();
  const id = finding?.id ?? '';
  return useQuery({
    queryKey: findingsKeys.acceptance(id),
    enabled: finding?.status === 'accepted',
    queryFn: async () => {
      const live: Acceptance[] = [];
      for (const state of ['active', 'partial'] as const) {
        const page = unwrap(await api.GET('/api/v1/tenants/{tenantID}/risk-acceptances', { params: { path: { tenantID: tenantId }, query: { state, per_page: 500 } } }));
        live.push(...page.items);
      }
      return (
        live.find((acceptance) => acceptance.finding_id === id) ?? live.find((acceptance) => acceptance.scope === 'group' && acceptance.snapshot.finding_ids.includes(id)) ?? null
      );
    },
  });
}

/** After any write: findings, the compliance score (controls) and the acceptances are stale. */
function useInvalidate() {
  const client = useQueryClient();
  return () =>
    Promise.all([
      client.invalidateQueries({ queryKey: findingsKeys.all }),
      client.invalidateQueries({ queryKey: ['controls'] }),
      client.invalidateQueries({ queryKey: ['overview'] }),
      client.invalidateQueries({ queryKey: ['risk-acceptances'] }),
    ]);
}

export function useResolveFinding() {
  const { tenantId } = useSession();
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async ({ findingId, comment }: { findingId: string; comment?: string }) =>
      unwrap(
        await api.POST('/api/v1/tenants/{tenantID}/findings/{findingID}/resolve', {
          params: { path: { tenantID: tenantId, findingID: findingId } },
          body: comment ? { comment } : {},
        }),
      ),
    onSuccess: invalidate,
  });
}

/** Resolves each selected finding, four at a time (there is no bulk endpoint), and counts the outcomes. */
export function useBulkResolve() {
  const { tenantId } = useSession();
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async (findingIds: string[]) => {
      const failures: { id: string; message: string }[] = [];
      let succeeded = 0;
      const queue = [...findingIds];
      const worker = async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
          try {
            unwrap(await api.POST('/api/v1/tenants/{tenantID}/findings/{findingID}/resolve', { params: { path: { tenantID: tenantId, findingID: id } }, body: {} }));
            succeeded += 1;
          } catch (error) {
            failures.push({ id, message: error instanceof Error ? error.message : String(error) });
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(4, findingIds.length) }, worker));
      return { succeeded, failures };
    },
    onSettled: invalidate,
  });
}

export function useAcceptFinding() {
  const { tenantId } = useSession();
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async ({ findingId, input }: { findingId: string; input: AcceptInput }) =>
      unwrap(
        await api.POST('/api/v1/tenants/{tenantID}/findings/{findingID}/accept', {
          params: { path: { tenantID: tenantId, findingID: findingId } },
          body: input,
        }),
      ),
    onSuccess: invalidate,
  });
}

export function useAcceptGroup() {
  const { tenantId } = useSession();
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async ({ groupId, input }: { groupId: string; input: AcceptInput }) =>
      unwrap(
        await api.POST('/api/v1/tenants/{tenantID}/findings/groups/{groupID}/accept', {
          params: { path: { tenantID: tenantId, groupID: groupId } },
          body: input,
        }),
      ),
    onSuccess: invalidate,
  });
}

/** Revokes the acceptance covering a finding: its own, or its group's. */
export function useRevokeAcceptance() {
  const { tenantId } = useSession();
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async (acceptance: Acceptance) => {
      if (acceptance.scope === 'group') {
        return unwrap(
          await api.DELETE('/api/v1/tenants/{tenantID}/findings/groups/{groupID}/accept', {
            params: { path: { tenantID: tenantId, groupID: acceptance.group_id } },
          }),
        );
      }
      if (!acceptance.finding_id) throw new ApiError(400, 'NO_FINDING', 'acceptance without a finding');
      return unwrap(
        await api.DELETE('/api/v1/tenants/{tenantID}/findings/{findingID}/accept', {
          params: { path: { tenantID: tenantId, findingID: acceptance.finding_id } },
        }),
      );
    },
    onSuccess: invalidate,
  });
}

/**
 * The POA&M item that tracks a finding and is not closed (the service allows one at a time), so the
 * page links to it instead of offering a second one.
 */
export function usePoamItemOf(findingId: string, enabled: boolean) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['poam', 'of-finding', tenantId, findingId],
    enabled,
    queryFn: async () => {
      const page = unwrap(
        await api.GET('/api/v1/tenants/{tenantID}/poam', {
          params: { path: { tenantID: tenantId }, query: { finding_id: findingId, status: 'open,in_progress,verification', per_page: 1 } },
        }),
      );
      return page.items[0] ?? null;
    },
  });
}

export function useCreatePoamItem() {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (findingId: string) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/poam', { params: { path: { tenantID: tenantId } }, body: { finding_id: findingId } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['poam'] }),
  });
}
