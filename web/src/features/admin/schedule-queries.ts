import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

/** Workspace schedules and their run history (read only here; the API changes them). */
export function useSchedules(query: { page: number; per_page: number }) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'schedules', tenantId, query],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/schedules', { params: { path: { tenantID: tenantId }, query } })),
    placeholderData: keepPreviousData,
  });
}

export function useScheduleRuns(scheduleId: string, query: { page: number; per_page: number }) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['admin', 'schedule-runs', tenantId, scheduleId, query],
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/tenants/{tenantID}/schedules/{scheduleID}/runs', { params: { path: { tenantID: tenantId, scheduleID: scheduleId }, query } })),
    placeholderData: keepPreviousData,
    // A run stays running until its job ends: follow it.
    refetchInterval: (q) => (q.state.data?.items.some((run) => run.status === 'running') ? 5000 : false),
  });
}
