import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import type { RoutePlugin } from '../../module.js';
import { contextOf } from '../../../platform/auth/authenticator.js';
import { pageRequest } from '../../../platform/http/pagination.js';
import { AnyObject, Nullable, Paged, PageQuery, StringEnum, TenantParams, Timestamp, Uuid, withErrors } from '../../../platform/http/schemas.js';
import { BinaryFile } from '../schemas.js';
import { REPORT_FORMATS, createReportService } from './report-service.js';

const ReportParams = Type.Object({ tenantID: Uuid, reportID: Uuid });

const GenerateBody = Type.Object(
  {
    type: Type.Optional(StringEnum(['compliance'] as const, { description: 'the report kind (compliance is the only one)' })),
    format: Type.Optional(StringEnum(REPORT_FORMATS, { default: 'pdf' })),
    framework: Type.Optional(Type.String({ maxLength: 50, description: 'one enabled framework; default all enabled frameworks' })),
    asset_group_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

const Report = Type.Object({
  id: Uuid,
  type: Type.String(),
  framework: Nullable(Type.String()),
  format: StringEnum(REPORT_FORMATS),
  asset_group_id: Nullable(Uuid),
  status: StringEnum(['queued', 'running', 'succeeded', 'failed', 'expired'] as const),
  status_url: Type.String(),
  download_url: Nullable(Type.String({ description: 'while succeeded: the download path (bearer token needed)' })),
  file_name: Nullable(Type.String()),
  content_type: Nullable(Type.String()),
  size_bytes: Nullable(Type.Integer()),
  summary: Nullable(AnyObject),
  attempts: Type.Integer(),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  expires_at: Nullable(Timestamp),
  error: Type.Optional(Type.String()),
});

const SignedQuery = Type.Object({ expires: Type.Integer({ minimum: 0 }), signature: Type.String({ pattern: '^[0-9a-f]{64}$' }) }, { additionalProperties: false });

function attachment(reply: FastifyReply, file: { contentType: string; fileName: string; size: number | null }) {
  reply.header('content-type', file.contentType);
  reply.header('content-disposition', `attachment; filename="${file.fileName}"`);
  if (file.size !== null) reply.header('content-length', String(file.size));
  return reply;
}

/** Reports: reports:write to generate, reports:read to list and download; 503 without artifact storage. */
export const reportRoutes: RoutePlugin = async (app, { deps }) => {
  const reports = createReportService(deps);
  const tags = ['reports'];

  app.post(
    '/tenants/:tenantID/reports/generate',
    {
      config: { permission: 'reports:write' },
      schema: {
        operationId: 'generateReport',
        tags,
        summary: 'Build a compliance report (PDF, JSON or CSV) in the background',
        description:
          '202 with the report, queued. Optional framework (one enabled framework) and asset_group_id (a group of this workspace) narrow it. report.generated (with a signed download_url valid for 24 hours) or report.failed follow. 503 without artifact storage.',
        params: TenantParams,
        body: GenerateBody,
        response: withErrors({ 202: Report }, [401, 403, 503]),
      },
    },
    async (request, reply) => reply.status(202).send(await reports.generate(contextOf(request), request.body)),
  );

  app.get(
    '/tenants/:tenantID/reports',
    {
      config: { permission: 'reports:read' },
      schema: {
        operationId: 'listReports',
        tags,
        summary: 'Reports of the workspace, newest first',
        params: TenantParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: withErrors({ 200: Paged(Report) }, [401, 403, 503]),
      },
    },
    async (request) => reports.list(contextOf(request).scope, pageRequest(request.query)),
  );

  app.get(
    '/tenants/:tenantID/reports/:reportID',
    {
      config: { permission: 'reports:read' },
      schema: { operationId: 'getReport', tags, summary: 'A report and its state', params: ReportParams, response: withErrors({ 200: Report }, [401, 403, 404, 503]) },
    },
    async (request) => reports.get(contextOf(request).scope, request.params.reportID),
  );

  app.get(
    '/tenants/:tenantID/reports/:reportID/download',
    {
      config: { permission: 'reports:read' },
      schema: {
        operationId: 'downloadReport',
        tags,
        summary: 'The report file',
        description: '409 while queued or running, and for a failed report; 410 once expired; 404 unknown report or one of another tenant or workspace.',
        params: ReportParams,
        produces: ['application/pdf', 'application/json', 'text/csv'],
        response: withErrors({ 200: BinaryFile }, [401, 403, 404, 409, 410, 503]),
      },
    },
    async (request, reply) => {
      const file = await reports.download(contextOf(request).scope, request.params.reportID);
      return attachment(reply, file).send(file.stream);
    },
  );

  app.get(
    '/tenants/:tenantID/reports/:reportID/file',
    {
      // The signature is the credential: receivers of report.generated hold no API token.
      config: { public: true },
      schema: {
        operationId: 'downloadReportSigned',
        tags,
        summary: 'The report file through the signed link of report.generated (no bearer token)',
        description: '403 for a link whose signature does not match or whose time has passed; otherwise as /download.',
        params: ReportParams,
        querystring: SignedQuery,
        produces: ['application/pdf', 'application/json', 'text/csv'],
        response: withErrors({ 200: BinaryFile }, [403, 404, 409, 410, 503]),
      },
    },
    async (request, reply) => {
      const file = await reports.downloadSigned(request.params.tenantID, request.params.reportID, request.query.expires, request.query.signature);
      return attachment(reply, file).send(file.stream);
    },
  );
};
