import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';
import type { ExportFormat, PoamStatus } from './model';

type Tenant = '/api/v1/tenants/{tenantID}';
export type PoamItem = Paths[`${Tenant}/poam/{poamId}`]['get']['responses'][200]['content']['application/json'];
export type PoamEvidence = Paths[`${Tenant}/poam/{poamId}/evidence`]['get']['responses'][200]['content']['application/json']['items'][number];
export type PoamSummary = Paths[`${Tenant}/poam/summary`]['get']['responses'][200]['content']['application/json'];
export type Milestone = PoamItem['milestones'][number];
export type Assessment = Paths[`${Tenant}/assessments`]['get']['responses'][200]['content']['application/json']['items'][number];

/** Every key starts with 'poam', so one invalidation after a write refreshes board, list, summary and item. */
export const poamKeys = {
  all: ['poam'] as const,
  list: (tenantId: string, filter: PoamFilter) => ['poam', 'list', tenantId, filter] as const,
  summary: (tenantId: string) => ['poam', 'summary', tenantId] as const,
  item: (tenantId: string, id: string) => ['poam', 'item', tenantId, id] as const,
  evidence: (tenantId: string, id: string) => ['poam', 'evidence', tenantId, id] as const,
};

export interface PoamFilter {
  status?: string;
  severity?: string;
  overdue?: boolean;
  sort?: string;
  page: number;
  per_page: number;
}

export function usePoamItems(filter: PoamFilter) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: poamKeys.list(tenantId, filter),
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/poam', { params: { path: { tenantID: tenantId }, query: filter } })),
  });
}

export function usePoamSummary() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: poamKeys.summary(tenantId),
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/poam/summary', { params: { path: { tenantID: tenantId } } })),
  });
}

export function usePoamItem(id: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: poamKeys.item(tenantId, id),
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/poam/{poamId}', { params: { path: { tenantID: tenantId, poamId: id } } })),
  });
}

export function usePoamEvidence(id: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: poamKeys.evidence(tenantId, id),
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/poam/{poamId}/evidence', { params: { path: { tenantID: tenantId, poamId: id } } })),
  });
}

function useInvalidatePoam() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: poamKeys.all });
}

/** PATCH /poam/{id}/status; a refusal comes back as an ApiError with the service's reason. */
export function useChangeStatus() {
  const { tenantId } = useSession();
  const invalidate = useInvalidatePoam();
  return useMutation({
    mutationFn: async ({ id, status, comment }: { id: string; status: PoamStatus; comment?: string }) =>
      unwrap(
        await api.PATCH('/api/v1/tenants/{tenantID}/poam/{poamId}/status', {
          params: { path: { tenantID: tenantId, poamId: id } },
          body: comment ? { status, comment } : { status },
        }),
      ),
    onSuccess: invalidate,
  });
}

export function useAddComment() {
  const { tenantId } = useSession();
  const invalidate = useInvalidatePoam();
  return useMutation({
    mutationFn: async ({ id, text }: { id: string; text: string }) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/poam/{poamId}/comments', { params: { path: { tenantID: tenantId, poamId: id } }, body: { text } })),
    onSuccess: invalidate,
  });
}

/**
 * Milestones change through the full update (PUT replaces every editable field), so the item's other
 * fields are sent back as they are.
 */
export function useSaveMilestones() {
  const { tenantId } = useSession();
  const invalidate = useInvalidatePoam();
  return useMutation({
    mutationFn: async ({ item, milestones }: { item: PoamItem; milestones: Milestone[] }) =>
      unwrap(
        await api.PUT('/api/v1/tenants/{tenantID}/poam/{poamId}', {
          params: { path: { tenantID: tenantId, poamId: item.id } },
          body: {
            weakness_name: item.weakness_name,
            weakness_description: item.weakness_description,
            control_ids: item.control_ids,
            severity: item.severity,
            point_of_contact: item.point_of_contact,
            scheduled_completion: item.scheduled_completion,
            milestones,
            vendor_dependency: item.vendor_dependency,
            deviation_request: item.deviation_request,
          },
        }),
      ),
    onSuccess: invalidate,
  });
}

export function useUploadEvidence() {
  const { tenantId } = useSession();
  const invalidate = useInvalidatePoam();
  return useMutation({
    mutationFn: async ({ id, file, description }: { id: string; file: File; description?: string }) => {
      const form = new FormData();
      // The description goes before the file part: the service reads the parts in order.
      if (description) form.append('description', description);
      form.append('file', file, file.name);
      return unwrap(
        await api.POST('/api/v1/tenants/{tenantID}/poam/{poamId}/evidence', {
          params: { path: { tenantID: tenantId, poamId: id } },
          // openapi-fetch sends FormData as is, with the browser's multipart boundary.
          body: form as never,
        }),
      );
    },
    onSuccess: invalidate,
  });
}

/** Assessments POA&M items can be raised from: rejected ones, or ones whose review flagged gaps. */
export function useGappedAssessments(enabled: boolean) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['assessments', 'poam-sources', tenantId],
    enabled,
    queryFn: async () => {
      const page = unwrap(await api.GET('/api/v1/tenants/{tenantID}/assessments', { params: { path: { tenantID: tenantId }, query: { per_page: 200 } } }));
      return page.items.filter((assessment) => assessment.status === 'changes_requested' || assessment.gaps.length > 0);
    },
  });
}

export function useGeneratePoam() {
  const { tenantId } = useSession();
  const invalidate = useInvalidatePoam();
  return useMutation({
    mutationFn: async (assessmentId: string) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/assessments/{aID}/generate-poam', { params: { path: { tenantID: tenantId, aID: assessmentId } }, body: {} })),
    onSuccess: invalidate,
  });
}

/** A plain GET link: the session cookie goes with it and the service names the file. */
export const exportUrl = (tenantId: string, format: ExportFormat): string => `/api/v1/tenants/${tenantId}/poam/export?format=${format}`;

export const evidenceDownloadUrl = (tenantId: string, poamId: string, evidenceId: string): string =>
  `/api/v1/tenants/${tenantId}/poam/${encodeURIComponent(poamId)}/evidence/${evidenceId}/download`;
