import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

type T = '/api/v1/tenants/{tenantID}';
export type ControlsStatus = Paths[`${T}/controls/status`]['get']['responses'][200]['content']['application/json'];
export type AuditRun = Paths[`${T}/findings/runs/{jobID}`]['get']['responses'][200]['content']['application/json'];

/** Every overview query starts with this key, so a finished audit refreshes the whole page at once. */
export const overviewKey = ['overview'] as const;

/** Scores, per-framework figures and findings by severity (the read model: cheap). */
export function useControlsStatus() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...overviewKey, 'status', tenantId],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/controls/status', { params: { path: { tenantID: tenantId }, query: { per_page: 1 } } })),
  });
}

export function useNewestCritical(limit = 5) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...overviewKey, 'critical', tenantId, limit],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/tenants/{tenantID}/findings', {
          params: { path: { tenantID: tenantId }, query: { severity: 'CRITICAL', sort: '-first_seen', per_page: limit } },
        }),
      ),
  });
}

/** Live acceptances (the list is newest first; the soonest to expire are picked here). */
export function useLiveAcceptances() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...overviewKey, 'acceptances', tenantId],
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/tenants/{tenantID}/risk-acceptances', { params: { path: { tenantID: tenantId }, query: { state: 'active', per_page: 100 } } })),
  });
}

export function useExpiringAttestations(enabled: boolean) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...overviewKey, 'attestations', tenantId],
    enabled,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/tenants/{tenantID}/controls/attestations', {
          params: { path: { tenantID: tenantId }, query: { expiring_soon: true, per_page: 10 } },
        }),
      ),
  });
}

/**
 * The newest audit run: the last point of the per-run history names it (the history is oldest first,
 * so its last page of one), then the run itself gives its state and figures.
 */
export function useLastAudit() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...overviewKey, 'last-audit', tenantId],
    queryFn: async (): Promise<AuditRun | null> => {
      const path = { tenantID: tenantId };
      const first = unwrap(await api.GET('/api/v1/tenants/{tenantID}/controls/history', { params: { path, query: { interval: 'run', per_page: 1 } } }));
      if (first.total === 0) return null;
      const last =
        first.total === 1
          ? first
          : unwrap(await api.GET('/api/v1/tenants/{tenantID}/controls/history', { params: { path, query: { interval: 'run', per_page: 1, page: first.total } } }));
      const runId = last.items[0]?.run_id;
      if (!runId) return null;
      const run = await api.GET('/api/v1/tenants/{tenantID}/findings/runs/{jobID}', { params: { path: { ...path, jobID: runId } } });
      // A discovery job measured that point: it is no audit run.
      if (run.response.status === 404) return null;
      return unwrap(run);
    },
  });
}

export function useLastDiscovery(enabled: boolean) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...overviewKey, 'last-discovery', tenantId],
    enabled,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/jobs', { params: { path: { tenantID: tenantId }, query: { per_page: 1 } } })).items[0] ?? null,
  });
}

/** Overall score per day over the last 30 days. */
export function useScoreHistory() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...overviewKey, 'history', tenantId],
    placeholderData: keepPreviousData,
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/tenants/{tenantID}/controls/history', { params: { path: { tenantID: tenantId }, query: { interval: 'day', per_page: 100 } } })),
  });
}

export function useRunAudit() {
  const { tenantId } = useSession();
  return useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/tenants/{tenantID}/findings/run', { params: { path: { tenantID: tenantId } }, body: {} })),
  });
}

const FINISHED = new Set(['succeeded', 'failed']);

/** An audit run, asked again every second until it has finished; then everything shown is refreshed. */
export function useAuditRun(jobId: string | null) {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useQuery({
    queryKey: ['audit-run', tenantId, jobId],
    enabled: Boolean(jobId),
    refetchInterval: (query) => (query.state.data && FINISHED.has(query.state.data.status) ? false : 1000),
    queryFn: async () => {
      const run = unwrap(await api.GET('/api/v1/tenants/{tenantID}/findings/runs/{jobID}', { params: { path: { tenantID: tenantId, jobID: jobId! } } }));
      if (FINISHED.has(run.status)) void client.invalidateQueries({ predicate: (query) => query.queryKey[0] !== 'audit-run' && query.queryKey[0] !== 'me' });
      return run;
    },
  });
}

export const isFinished = (status: string) => FINISHED.has(status);
