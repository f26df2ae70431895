import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createExportService } from './export-service.js';
import { BinaryFile, DiagramQuery, DrawioQuery, ExportJob, ExportList, ExportListQuery, ExportParams, ExportStart, SyncAccepted } from './schemas.js';

function attachment(reply: FastifyReply, contentType: string, fileName: string, size?: number | null): FastifyReply {
  reply.header('content-type', contentType);
  reply.header('content-disposition', `attachment; filename="${fileName}"`);
  if (size !== null && size !== undefined) reply.header('content-length', String(size));
  return reply;
}

/** Background topology exports and the synchronous export endpoints (permission nodes:read). */
export const exportRoutes: RoutePlugin = async (app, { deps }) => {
  const exports = createExportService(deps);
  const tags = ['exports'];

  app.post(
    '/tenants/:tenantID/exports',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'startExport',
        tags,
        summary: 'Start a background export (architecture_diagram {format: png|svg} or drawio)',
        description:
          '202 with the job. An identical export (same kind and params in the same tenant and workspace) that is queued or running is returned instead, with already_active true. 400 unknown kind or params; 503 when artifact storage is not configured.',
        params: TenantParams,
        body: ExportStart,
        response: withErrors({ 202: ExportJob }, [401, 403, 503]),
      },
    },
    async (request, reply) => reply.status(202).send(await exports.start(contextOf(request), request.body)),
  );

  app.get(
    '/tenants/:tenantID/exports',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'listExports',
        tags,
        summary: 'Exports of the workspace, newest first',
        description:
          'Pages with limit/offset, or with page/per_page as every other list (limit = per_page, offset = (page - 1) × per_page; page 1 and 50 a page when one of the two is absent; the response then also has page, per_page and total_pages). ' +
          'Without limit or page every export is returned; a supplied limit is never capped. The Link header has first, prev, next and last in the style of the request. ' +
          '400 for an invalid limit, offset, page or per_page, for limit or offset together with page or per_page, or for an unknown parameter.',
        params: TenantParams,
        querystring: ExportListQuery,
        response: withErrors({ 200: ExportList }, [401, 403, 503]),
      },
    },
    async (request) => exports.list(contextOf(request).scope, request.query),
  );

  app.get(
    '/tenants/:tenantID/exports/:jobID',
    {
      config: { permission: 'nodes:read' },
      schema: { operationId: 'getExport', tags, summary: 'Status of an export job', params: ExportParams, response: withErrors({ 200: ExportJob }, [401, 403, 404, 503]) },
    },
    async (request) => exports.get(contextOf(request).scope, request.params.jobID),
  );

  app.get(
    '/tenants/:tenantID/exports/:jobID/download',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'downloadExport',
        tags,
        summary: 'The finished file',
        description: '409 while queued or running, and for a failed export; 410 once expired (the file was deleted); 404 unknown export or one of another tenant or workspace.',
        params: ExportParams,
        produces: ['image/png', 'image/svg+xml', 'application/vnd.jgraph.mxfile+xml'],
        response: withErrors({ 200: BinaryFile }, [401, 403, 404, 409, 410, 503]),
      },
    },
    async (request, reply) => {
      const file = await exports.download(contextOf(request).scope, request.params.jobID);
      return attachment(reply, file.contentType, file.fileName, file.size).send(file.stream);
    },
  );

  const synchronous = (kind: 'architecture_diagram' | 'drawio') => async (request: FastifyRequest, reply: FastifyReply) => {
    const controller = new AbortController();
    request.raw.once('close', () => {
      if (!reply.raw.writableFinished) controller.abort(new Error('client went away'));
    });
    const params = kind === 'drawio' ? {} : { format: (request.query as { format?: string }).format ?? 'png' };
    const result = await exports.synchronous(contextOf(request), kind, params, controller.signal);
    if ('job' in result) return reply.status(202).header('location', result.job!.status_url).send(result.job);
    const file = result.file!;
    return attachment(reply, file.contentType, file.fileName).header('x-node-count', String(file.nodes)).send(file.stream);
  };

  app.get(
    '/tenants/:tenantID/topology/export/diagram',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'exportDiagramNow',
        tags,
        summary: 'Synchronous architecture diagram (PNG, or SVG with format=svg)',
        description:
          'Up to 500 nodes the file itself. Above 500 nodes with artifact storage: 202 with a Location header pointing at the export job status and {job_id, status_url, reason}. Without artifact storage: the file at every size.',
        params: TenantParams,
        querystring: DiagramQuery,
        produces: ['image/png', 'image/svg+xml'],
        response: withErrors({ 200: BinaryFile, 202: SyncAccepted }, [401, 403]),
      },
    },
    synchronous('architecture_diagram'),
  );

  app.get(
    '/tenants/:tenantID/topology/export/drawio',
    {
      config: { permission: 'nodes:read' },
      schema: {
        operationId: 'exportDrawioNow',
        tags,
        summary: 'Synchronous draw.io export',
        description:
          'Up to 500 nodes the file itself. Above 500 nodes with artifact storage: 202 with a Location header pointing at the export job status and {job_id, status_url, reason}. Without artifact storage: the file at every size.',
        params: TenantParams,
        querystring: DrawioQuery,
        produces: ['application/vnd.jgraph.mxfile+xml'],
        response: withErrors({ 200: BinaryFile, 202: SyncAccepted }, [401, 403]),
      },
    },
    synchronous('drawio'),
  );
};
