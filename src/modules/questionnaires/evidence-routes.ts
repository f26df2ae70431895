import multipart from '@fastify/multipart';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { badRequest } from '../../platform/http/errors.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { assigneeRespondent } from './assessment-service.js';
import { createQuestionnaireEvidenceService, MAX_EVIDENCE_BYTES, requireStore } from './evidence-service.js';
import { presentEvidence } from './assessment-view.js';
import { FILE_TYPES } from './file-types.js';
import { Binary, DownloadQuery, Evidence, EvidenceList, EvidenceListQuery, EvidenceParams, EvidenceUploadForm } from './schemas.js';

/** RFC 6266 Content-Disposition with an ASCII fallback and the UTF-8 name. */
function disposition(kind: 'attachment' | 'inline', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * Files a browser may show in the page (the reviewer's preview): PDF and raster images only, and only
 * when the extension's signature was checked at upload and the recorded type is that extension's own.
 * Everything else (HTML, SVG, text a browser could run or sniff) is always an attachment.
 */
const PREVIEWABLE = new Set(['.pdf', '.png', '.jpg', '.jpeg', '.gif']);
function previewable(row: { extension: string; content_type: string }): boolean {
  return PREVIEWABLE.has(row.extension) && (FILE_TYPES[row.extension]?.contentTypes.includes(row.content_type) ?? false);
}

/** Files attached to assessments (attestation evidence), streamed to and from the artifact store. */
export const evidenceRoutes: RoutePlugin = async (app, { deps }) => {
  // Registered here, so only these routes parse multipart bodies.
  await app.register(multipart, {
    // One byte over the limit reaches the store's meter, which refuses it (413) and keeps nothing.
    limits: { fileSize: MAX_EVIDENCE_BYTES + 1, files: 1, fields: 10, fieldSize: 10_000, parts: 12 },
  });
  const evidence = createQuestionnaireEvidenceService(deps);
  const tags = ['attestation-evidence'];

  app.post(
    '/tenants/:tenantID/attestation-evidence',
    {
      config: { permission: 'assessment:read', rawBody: true },
      // The multipart parser leaves the body to the handler; the schema only documents the form.
      preValidation: async (request) => {
        request.body = {};
      },
      schema: {
        operationId: 'uploadAttestationEvidence',
        tags,
        summary: "Upload a file for an assessment's file_upload question (the assignee only, multipart, at most 50 MiB)",
        description:
          "multipart/form-data with the fields assessment_id and question_id (and optional description) before the file part. 413 above 50 MiB (nothing is kept); 400 when the extension is not in the question's accepted_types, the content type or the first bytes do not fit it, or the assessment is submitted or approved; 403 for anyone but the assignee; 503 without artifact storage. The answer of the question is then the returned id.",
        consumes: ['multipart/form-data'],
        params: TenantParams,
        body: EvidenceUploadForm,
        response: withErrors({ 201: Evidence }, [401, 403, 404, 413, 503]),
      },
    },
    async (request, reply) => {
      requireStore(deps);
      if (!request.isMultipart()) throw badRequest('expected a multipart/form-data upload');
      const record = await evidence.upload(assigneeRespondent(contextOf(request)), request.parts());
      return reply.status(201).send(record);
    },
  );

  app.get(
    '/tenants/:tenantID/attestation-evidence',
    {
      config: { permission: 'attestation_evidence:read' },
      schema: {
        operationId: 'listAttestationEvidence',
        tags,
        summary: 'Evidence files of the workspace, newest first',
        params: TenantParams,
        querystring: EvidenceListQuery,
        response: withErrors({ 200: EvidenceList }, [401, 403, 503]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return evidence.list(contextOf(request).scope, filter, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/attestation-evidence/:eID',
    {
      config: { permission: 'attestation_evidence:read' },
      schema: {
        operationId: 'getAttestationEvidence',
        summary: 'Metadata of an evidence file',
        tags,
        params: EvidenceParams,
        response: withErrors({ 200: Evidence }, [401, 403, 404, 503]),
      },
    },
    async (request) => {
      const { scope } = contextOf(request);
      return presentEvidence(await evidence.get(scope, request.params.eID), scope.tenantId);
    },
  );

  app.get(
    '/tenants/:tenantID/attestation-evidence/:eID/download',
    {
      config: { permission: 'attestation_evidence:read' },
      schema: {
        operationId: 'downloadAttestationEvidence',
        tags,
        summary: 'The file as uploaded (x-checksum-sha256 carries its SHA-256)',
        description:
          'disposition=inline asks for the file to be shown in the page (the console previews PDF and images): honoured for PDF, PNG, JPEG and GIF whose signature was checked at upload; every other file is an attachment whatever is asked.',
        params: EvidenceParams,
        querystring: DownloadQuery,
        produces: ['application/octet-stream'],
        response: withErrors({ 200: Binary }, [401, 403, 404, 503]),
      },
    },
    async (request, reply) => {
      const { row, stream } = await evidence.open(contextOf(request).scope, request.params.eID);
      const kind = request.query.disposition === 'inline' && previewable(row) ? 'inline' : 'attachment';
      reply
        .header('content-type', row.content_type)
        .header('content-length', String(row.size_bytes))
        .header('content-disposition', disposition(kind, row.filename))
        .header('x-content-type-options', 'nosniff')
        .header('x-checksum-sha256', row.sha256);
      return reply.send(stream);
    },
  );
};
