import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

type Json<P extends keyof Paths> = Paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer T } } } } } ? T : never;
export type ServiceRow = Json<'/api/v1/tenants/{tenantID}/services'>['items'][number];
export type ServiceDetail = Json<'/api/v1/tenants/{tenantID}/services/{svcID}'>;
export type ApplicationRow = Json<'/api/v1/tenants/{tenantID}/applications'>['items'][number];
export type ApplicationDetail = Json<'/api/v1/tenants/{tenantID}/applications/{app_id}'>;
export type MemberResource = ApplicationDetail['resources']['items'][number];
export type AssetGroupRow = Json<'/api/v1/tenants/{tenantID}/asset-groups'>['items'][number];
export type MemberNode = Json<'/api/v1/tenants/{tenantID}/asset-groups/{id}/members'>['items'][number];
export type ExposureItem = Json<'/api/v1/tenants/{tenantID}/services/{serviceID}/cve-exposure'>['items'][number];
export type Health = ServiceRow['health'];

export const servicesKey = ['services'] as const;
interface Paging {
  search?: string;
  page: number;
  per_page: number;
}

export function useServices(filter: Paging) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...servicesKey, 'list', tenantId, filter],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/services', { params: { path: { tenantID: tenantId }, query: filter } })),
  });
}

export function useService(id: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...servicesKey, 'service', tenantId, id],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/services/{svcID}', { params: { path: { tenantID: tenantId, svcID: id } } })),
  });
}

/** The CVEs reachable in a service (its findings and its hosts' packages), riskiest first. */
export function useCveExposure(id: string, filter: { kev?: boolean; page: number; per_page: number }) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...servicesKey, 'exposure', tenantId, id, filter],
    placeholderData: keepPreviousData,
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/tenants/{tenantID}/services/{serviceID}/cve-exposure', { params: { path: { tenantID: tenantId, serviceID: id }, query: filter } })),
  });
}

export function useApplications(filter: Paging) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...servicesKey, 'applications', tenantId, filter],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/applications', { params: { path: { tenantID: tenantId }, query: filter } })),
  });
}

export function useApplication(id: string, page: { page: number; per_page: number }) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...servicesKey, 'application', tenantId, id, page],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/applications/{app_id}', { params: { path: { tenantID: tenantId, app_id: id }, query: page } })),
  });
}

export function useAssetGroups(filter: Paging) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...servicesKey, 'asset-groups', tenantId, filter],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/asset-groups', { params: { path: { tenantID: tenantId }, query: filter } })),
  });
}

export function useAssetGroup(id: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...servicesKey, 'asset-group', tenantId, id],
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/asset-groups/{id}', { params: { path: { tenantID: tenantId, id } } })),
  });
}

export function useAssetGroupMembers(id: string, page: { page: number; per_page: number }) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...servicesKey, 'asset-group-members', tenantId, id, page],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/asset-groups/{id}/members', { params: { path: { tenantID: tenantId, id }, query: page } })),
  });
}
