import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

type StatusQuery = NonNullable<Paths['/api/v1/tenants/{tenantID}/controls/status']['get']['parameters']['query']>;
export type Framework = NonNullable<StatusQuery['framework']>;
export type AutomatedState = NonNullable<StatusQuery['automated_state']>;
export type AttestationStatus = NonNullable<StatusQuery['status']>;
export type ControlRow = Paths['/api/v1/tenants/{tenantID}/controls/status']['get']['responses'][200]['content']['application/json']['controls']['items'][number];
export type GapRow = Paths['/api/v1/tenants/{tenantID}/controls/gaps']['get']['responses'][200]['content']['application/json']['items'][number];

export const AUTOMATED_STATES: AutomatedState[] = ['failing', 'unknown', 'passing', 'not_automated'];
export const ATTESTATION_STATUSES: AttestationStatus[] = ['not_assessed', 'questionnaire_assigned', 'in_progress', 'submitted', 'changes_requested', 'attested'];

export const controlsKey = ['controls'] as const;

export interface ControlsFilter {
  framework?: Framework;
  automated_state?: AutomatedState;
  status?: AttestationStatus;
  page: number;
  per_page: number;
}

/** The applicable controls of the enabled frameworks (or one), with their state, one page at a time. */
export function useControls(filter: ControlsFilter) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...controlsKey, 'status', tenantId, filter],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/controls/status', { params: { path: { tenantID: tenantId }, query: filter } })),
  });
}

/** The enabled frameworks, as the read model counts them. */
export function useEnabledFrameworks() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...controlsKey, 'frameworks', tenantId],
    queryFn: async () =>
      Object.keys(
        unwrap(await api.GET('/api/v1/tenants/{tenantID}/controls/status', { params: { path: { tenantID: tenantId }, query: { per_page: 1 } } })).by_framework,
      ) as Framework[],
  });
}

export function useGaps(filter: { framework?: Framework; page: number; per_page: number }) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...controlsKey, 'gaps', tenantId, filter],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/controls/gaps', { params: { path: { tenantID: tenantId }, query: filter } })),
  });
}

export function useComplianceSettings(enabled: boolean) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...controlsKey, 'settings', tenantId],
    enabled,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/settings/compliance', { params: { path: { tenantID: tenantId } } })),
  });
}

/** Enabling or disabling frameworks changes every score and list: all control queries go stale. */
export function useUpdateFrameworks() {
  const { tenantId } = useSession();
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (frameworks: { id: string; enabled: boolean }[]) =>
      unwrap(await api.PUT('/api/v1/tenants/{tenantID}/settings/compliance', { params: { path: { tenantID: tenantId } }, body: { frameworks } })),
    onSuccess: () => client.invalidateQueries({ predicate: (query) => query.queryKey[0] !== 'me' }),
  });
}

export type AttestationRow = Paths['/api/v1/tenants/{tenantID}/controls/attestations']['get']['responses'][200]['content']['application/json']['items'][number];

export interface AttestationsFilter {
  framework?: Framework;
  status?: AttestationStatus;
  expiring_soon?: boolean;
  page: number;
  per_page: number;
}

/** The controls questionnaires cover, with their attestation, expiry and reminders (GET /controls/attestations). */
export function useAttestations(filter: AttestationsFilter) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...controlsKey, 'attestations', tenantId, filter],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/controls/attestations', { params: { path: { tenantID: tenantId }, query: filter } })),
  });
}
