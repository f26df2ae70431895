import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { ApiError, unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

type Json<P extends keyof Paths> = Paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer T } } } } } ? T : never;
export type CveRecord = Json<'/api/v1/vulndb/cve/{cveId}'>;
export type KevRow = Json<'/api/v1/vulndb/kev'>['items'][number];
export type ImportRow = Json<'/api/v1/vulndb/imports'>['items'][number];
export type HostRow = Json<'/api/v1/tenants/{tenantID}/nodes'>['items'][number];
export type KevFilter = NonNullable<Paths['/api/v1/vulndb/kev']['get']['parameters']['query']>;
export type ImportsFilter = NonNullable<Paths['/api/v1/vulndb/imports']['get']['parameters']['query']>;

export const vulnerabilitiesKey = ['vulnerabilities'] as const;
/** The node type agents report hosts as (agents module, host-node.ts). */
export const HOST_NODE_TYPE = 'host.os.instance';
export const CVE_PATTERN = /^CVE-\d{4}-\d{4,19}$/i;

/** One CVE: KEV, EPSS, NVD and OSV combined. A CVE no source knows is `null` (404), not an error. */
export function useCve(cveId: string | null) {
  return useQuery({
    queryKey: [...vulnerabilitiesKey, 'cve', cveId],
    enabled: Boolean(cveId),
    retry: false,
    queryFn: async () => {
      try {
        return unwrap(await api.GET('/api/v1/vulndb/cve/{cveId}', { params: { path: { cveId: cveId! } } }));
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });
}

export function useKev(filter: KevFilter) {
  return useQuery({
    queryKey: [...vulnerabilitiesKey, 'kev', filter],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/vulndb/kev', { params: { query: filter } })),
  });
}

export function useVulnStats() {
  return useQuery({
    queryKey: [...vulnerabilitiesKey, 'stats'],
    queryFn: async () => unwrap(await api.GET('/api/v1/vulndb/stats')),
  });
}

/** Import runs; polled while one is queued or running so its progress moves on screen. */
export function useImports(filter: ImportsFilter) {
  return useQuery({
    queryKey: [...vulnerabilitiesKey, 'imports', filter],
    placeholderData: keepPreviousData,
    queryFn: async () => unwrap(await api.GET('/api/v1/vulndb/imports', { params: { query: filter } })),
    refetchInterval: (query) => (query.state.data?.items.some((run) => run.status === 'queued' || run.status === 'running') ? 2000 : false),
  });
}

/** The hosts agents report (graph nodes of the host type). */
export function useHosts(filter: { search?: string; page: number; per_page: number }) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...vulnerabilitiesKey, 'hosts', tenantId, filter],
    placeholderData: keepPreviousData,
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/tenants/{tenantID}/nodes', { params: { path: { tenantID: tenantId }, query: { ...filter, types: HOST_NODE_TYPE, sort: 'name' } } })),
  });
}

/** A package of a host's SBOM with the vulnerabilities that affect it. */
export interface HostPackage {
  ref: string;
  name: string;
  version: string;
  purl: string | null;
  cves: string[];
}

interface CdxDocument {
  metadata?: { component?: { name?: string; description?: string } };
  components?: Array<{ 'bom-ref': string; type: string; name: string; version?: string; purl?: string }>;
  vulnerabilities?: Array<{ id: string; affects?: Array<{ ref: string }> }>;
}

/**
 * A host's packages and their CVEs, read from its CycloneDX SBOM (the one API that lists a host's
 * inventory with its known vulnerabilities). The operating system component is left out.
 */
export function useHostPackages(nodeId: string) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: [...vulnerabilitiesKey, 'host-packages', tenantId, nodeId],
    queryFn: async () => {
      const document = unwrap(
        await api.GET('/api/v1/tenants/{tenantID}/nodes/{id}/sbom', { params: { path: { tenantID: tenantId, id: nodeId } }, parseAs: 'json' }),
      ) as CdxDocument;
      const cvesOf = new Map<string, string[]>();
      for (const vuln of document.vulnerabilities ?? []) for (const { ref } of vuln.affects ?? []) cvesOf.set(ref, [...(cvesOf.get(ref) ?? []), vuln.id]);
      const packages: HostPackage[] = (document.components ?? [])
        .filter((c) => c.type !== 'operating-system' && c.type !== 'device')
        .map((c) => ({ ref: c['bom-ref'], name: c.name, version: c.version ?? '', purl: c.purl ?? null, cves: (cvesOf.get(c['bom-ref']) ?? []).sort() }));
      return { host: document.metadata?.component?.name ?? nodeId, description: document.metadata?.component?.description ?? '', packages };
    },
  });
}
