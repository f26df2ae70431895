import { useMutation, useQuery } from '@tanstack/react-query';
import { api, type Paths } from '../../api/client';
import { unwrap } from '../../api/errors';
import { useSession } from '../../session/session';

export type GraphNodeRow = Paths['/api/v1/tenants/{tenantID}/nodes']['get']['responses'][200]['content']['application/json']['items'][number];
export type GraphEdgeRow = Paths['/api/v1/tenants/{tenantID}/edges']['get']['responses'][200]['content']['application/json']['items'][number];
export type TraceResult = Paths['/api/v1/tenants/{tenantID}/pathtracer/trace']['post']['responses'][200]['content']['application/json'];
export type BlastResult = Paths['/api/v1/tenants/{tenantID}/pathtracer/blast-radius']['post']['responses'][200]['content']['application/json'];
export type ExportJob = Paths['/api/v1/tenants/{tenantID}/exports/{jobID}']['get']['responses'][200]['content']['application/json'];

const PER_PAGE = 500;
/** The console draws at most this many nodes (and edges): beyond it the canvas is no help; exports cover the rest. */
export const NODE_CAP = 5000;
export const EDGE_CAP = 20000;
export const FINDING_CAP = 10000;

/** Worst open severity and number of open findings per resource id. */
export interface FindingSummary {
  severity: string;
  count: number;
}

export interface TopologyData {
  nodes: GraphNodeRow[];
  edges: GraphEdgeRow[];
  nodesTotal: number;
  edgesTotal: number;
  findings: Map<string, FindingSummary>;
  findingsShown: number;
  findingsTotal: number;
}

const RANK: Record<string, number> = { CRITICAL: 5, HIGH: 4, MEDIUM: 3, LOW: 2, INFO: 1 };

/** Pages through a list endpoint until the end or the cap; returns the rows and the API's total. */
async function pageAll<T>(fetchPage: (page: number) => Promise<{ items: T[]; total: number; total_pages: number }>, cap: number) {
  const rows: T[] = [];
  let total = 0;
  for (let page = 1; rows.length < cap; page++) {
    const body = await fetchPage(page);
    total = body.total;
    rows.push(...body.items);
    if (page >= body.total_pages || body.items.length === 0) break;
  }
  return { rows: rows.slice(0, cap), total };
}

/** The workspace graph: nodes, edges and the worst open finding of each node, read page by page. */
export function useTopology() {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['topology', tenantId],
    queryFn: async (): Promise<TopologyData> => {
      const path = { tenantID: tenantId };
      const [nodes, edges, findings] = await Promise.all([
        pageAll((page) => api.GET('/api/v1/tenants/{tenantID}/nodes', { params: { path, query: { page, per_page: PER_PAGE, sort: 'id' } } }).then(unwrap), NODE_CAP),
        pageAll((page) => api.GET('/api/v1/tenants/{tenantID}/edges', { params: { path, query: { page, per_page: PER_PAGE } } }).then(unwrap), EDGE_CAP),
        pageAll(
          (page) =>
            api
              .GET('/api/v1/tenants/{tenantID}/findings', { params: { path, query: { page, per_page: PER_PAGE, status: 'open' } } })
              .then(unwrap)
              .then((body) => ({ ...body, items: body.items.map((f) => ({ resource_id: f.resource_id, severity: f.severity })) })),
          FINDING_CAP,
        ),
      ]);
      const summary = new Map<string, FindingSummary>();
      for (const f of findings.rows) {
        const seen = summary.get(f.resource_id);
        if (!seen) summary.set(f.resource_id, { severity: f.severity, count: 1 });
        else {
          seen.count++;
          if ((RANK[f.severity] ?? 0) > (RANK[seen.severity] ?? 0)) seen.severity = f.severity;
        }
      }
      return {
        nodes: nodes.rows,
        edges: edges.rows,
        nodesTotal: nodes.total,
        edgesTotal: edges.total,
        findings: summary,
        findingsShown: findings.rows.length,
        findingsTotal: findings.total,
      };
    },
    staleTime: 60_000,
  });
}

export function useTrace() {
  const { tenantId } = useSession();
  return useMutation({
    mutationFn: async (body: { source: string; target: string }) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/pathtracer/trace', { params: { path: { tenantID: tenantId } }, body })),
  });
}

export function useBlastRadius() {
  const { tenantId } = useSession();
  return useMutation({
    mutationFn: async (source: string) =>
      unwrap(await api.POST('/api/v1/tenants/{tenantID}/pathtracer/blast-radius', { params: { path: { tenantID: tenantId } }, body: { source, limit: 200 } })),
  });
}

export type ExportKind = 'drawio' | 'png';

/** Starts an export job of the whole workspace graph (draw.io file or PNG diagram). */
export function useStartExport() {
  const { tenantId } = useSession();
  return useMutation({
    mutationFn: async (kind: ExportKind) =>
      unwrap(
        await api.POST('/api/v1/tenants/{tenantID}/exports', {
          params: { path: { tenantID: tenantId } },
          body: kind === 'drawio' ? { kind: 'drawio' } : { kind: 'architecture_diagram', params: { format: 'png' } },
        }),
      ),
  });
}

/** An export job, polled every second until it finishes. */
export function useExportJob(jobId: string | null) {
  const { tenantId } = useSession();
  return useQuery({
    queryKey: ['exports', tenantId, jobId],
    enabled: jobId !== null,
    queryFn: async () => unwrap(await api.GET('/api/v1/tenants/{tenantID}/exports/{jobID}', { params: { path: { tenantID: tenantId, jobID: jobId! } } })),
    refetchInterval: (query) => (query.state.data && !['queued', 'running'].includes(query.state.data.status) ? false : 1000),
    staleTime: 0,
  });
}

export function exportDownloadUrl(tenantId: string, job: ExportJob): string {
  return job.download_url?.startsWith('/') ? job.download_url : `/api/v1/tenants/${tenantId}/exports/${job.job_id}/download`;
}
