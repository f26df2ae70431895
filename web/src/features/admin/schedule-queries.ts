import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

/** Workspace schedules, their run history, and the changes the role may make to them. */
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

type ScheduleCreate = Paths['/api/v1/tenants/{tenantID}/schedules']['post']['requestBody']['content']['application/json'];
type SchedulePatch = NonNullable<Paths['/api/v1/tenants/{tenantID}/schedules/{scheduleID}']['patch']['requestBody']>['content']['application/json'];
export type Schedule = Paths['/api/v1/tenants/{tenantID}/schedules/{scheduleID}']['get']['responses'][200]['content']['application/json'];
export type ScheduleKind = Schedule['kind'];

/** Changing a schedule changes the list, the schedule and (through next_run_at) nothing else. */
function useScheduleMutation<I, O>(run: (tenantId: string, input: I) => Promise<O>) {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useMutation({ mutationFn: (input: I) => run(tenantId, input), onSuccess: () => void client.invalidateQueries({ queryKey: ['admin', 'schedules'] }) });
}

export function useCreateSchedule() {
  return useScheduleMutation(async (tenantId, body: ScheduleCreate) =>
    unwrap(await api.POST('/api/v1/tenants/{tenantID}/schedules', { params: { path: { tenantID: tenantId } }, body })),
  );
}

export function useUpdateSchedule() {
  return useScheduleMutation(async (tenantId, { id, body }: { id: string; body: SchedulePatch }) =>
    unwrap(await api.PATCH('/api/v1/tenants/{tenantID}/schedules/{scheduleID}', { params: { path: { tenantID: tenantId, scheduleID: id } }, body })),
  );
}

export function useDeleteSchedule() {
  return useScheduleMutation(async (tenantId, id: string) => {
    const result = await api.DELETE('/api/v1/tenants/{tenantID}/schedules/{scheduleID}', { params: { path: { tenantID: tenantId, scheduleID: id } } });
    if (!result.response.ok) unwrap(result);
  });
}
