import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { badRequest, conflict } from '../../platform/http/errors.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createItemsService, filterOf } from './items-service.js';
import { createPoamEvidenceService, MAX_EVIDENCE_BYTES } from './evidence-service.js';
import { collectExport } from './export/collect.js';
import { fedrampWorkbook } from './export/fedramp-xlsx.js';
import { poamCsv } from './export/csv.js';
import { oscalPoam } from './export/oscal.js';
import {
  CommentBody,
  CreateBody,
  Evidence,
  EvidenceList,
  EvidenceParams,
  EvidenceUploadQuery,
  ExportQuery,
  ItemParams,
  ListQuery,
  OverdueQuery,
  PoamItem,
  PoamList,
  StatusBody,
  Summary,
  UpdateBody,
} from './schemas.js';

const Binary = Type.Unsafe<unknown>({ type: 'string', format: 'binary' });
// Documents the form; the handler reads the parts as a stream.
const UploadForm = Type.Unsafe<unknown>({
  type: 'object',
  properties: {
    description: { type: 'string', description: 'optional, before the file part (or ?description=)' },
    file: { type: 'string', format: 'binary', description: 'required: at most 50 MiB' },
  },
  description: 'multipart/form-data with one file part',
});

/** RFC 6266 Content-Disposition with an ASCII fallback and the UTF-8 name. */
function attachment(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** POA&M items: CRUD, status flow, comments, evidence, summary, overdue and exports. */
// eslint-disable-next-line max-lines-per-function -- the module's route table, one short handler per route; splitting it into <thing>-routes.ts files is a follow-up of issue 26 not done in time
export const poamRoutes: RoutePlugin = async (app, { deps }) => {
  // Registered here, so only these routes parse multipart bodies.
  await app.register(multipart, {
    // One byte over the limit reaches the store's meter, which refuses it (413) and keeps nothing.
    limits: { fileSize: MAX_EVIDENCE_BYTES + 1, files: 1, fields: 5, fieldSize: 10_000, parts: 6 },
  });
  const items = createItemsService(deps);
  const evidence = createPoamEvidenceService(deps);
  const tags = ['poam'];
  const base = '/tenants/:tenantID/poam';

  app.get(
    base,
    {
      config: { permission: 'poam:read' },
      schema: {
        operationId: 'listPoamItems',
        tags,
        summary: 'POA&M items, paged, filtered by status, severity, control, point of contact, finding and overdue',
        params: TenantParams,
        querystring: ListQuery,
        response: withErrors({ 200: PoamList }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...query } = request.query;
      return items.list(contextOf(request).scope, query, pageRequest({ page, per_page }));
    },
  );

  app.post(
    base,
    {
      config: { permission: 'poam:write' },
      schema: {
        operationId: 'createPoamItem',
        tags,
        summary: 'Create an item by hand, or draft one from an open finding ({finding_id})',
        description:
          'Without finding_id: weakness_name, weakness_description, control_ids, severity and point_of_contact are required. With finding_id: name, description, severity (INFO becomes LOW) and the NIST 800-53 controls come from the finding unless given; point_of_contact defaults to the caller. scheduled_completion defaults by severity: CRITICAL 15 days, HIGH 30, MEDIUM 90, LOW 180. 201 with the item (status open, id POAM-<n>); 404 unknown finding; 400 the finding is resolved; 409 the finding already has an item that is not closed.',
        params: TenantParams,
        body: CreateBody,
        response: withErrors({ 201: PoamItem }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await items.create(contextOf(request), request.body)),
  );

  app.get(
    `${base}/summary`,
    {
      config: { permission: 'poam:read' },
      schema: {
        operationId: 'getPoamSummary',
        tags,
        summary: 'Counts by status, by severity, by both, of items not closed by severity, and overdue',
        params: TenantParams,
        response: withErrors({ 200: Summary }, [401, 403]),
      },
    },
    async (request) => items.summary(contextOf(request).scope),
  );

  app.get(
    `${base}/overdue`,
    {
      config: { permission: 'poam:read' },
      schema: {
        operationId: 'listOverduePoamItems',
        tags,
        summary: 'Items whose scheduled completion date (UTC) has passed and that are not closed; the most overdue first',
        params: TenantParams,
        querystring: OverdueQuery,
        response: withErrors({ 200: PoamList }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...query } = request.query;
      return items.overdue(contextOf(request).scope, query, pageRequest({ page, per_page }));
    },
  );

  app.get(
    `${base}/export`,
    {
      config: { permission: 'poam:read' },
      schema: {
        operationId: 'exportPoam',
        tags,
        summary: 'The POA&M as a file: fedramp (.xlsx), csv (OMB-style), json, or oscal (OSCAL 1.0.6 POA&M JSON)',
        description:
          'fedramp: the official FedRAMP POA&M template filled in (open items on "Open POA&M Items", closed ones on "Closed POA&M Items"). csv: the OMB M-02-01 elements first, then controls, severity and links (columns in docs/poam.md). json: {generated_at, tenant_id, workspace_id, total, items}. oscal: an OSCAL POA&M document; 409 when no item matches (OSCAL requires at least one poam-item). The list filters apply; 400 when the selection holds more than 20,000 items. Built in the request: artifact storage is not needed.',
        params: TenantParams,
        querystring: ExportQuery,
        produces: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'text/csv', 'application/json'],
        response: withErrors({ 200: Binary }, [401, 403, 409]),
      },
    },
    async (request, reply) => {
      const { format = 'json', system_name, impact_level, ...query } = request.query;
      const { scope } = contextOf(request);
      const now = deps.clock.now();
      const data = await collectExport(deps.database.db, scope, filterOf(query), now);
      const stamp = now.toISOString().slice(0, 10);
      reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
      if (format === 'fedramp') {
        const buffer = await fedrampWorkbook(data, { systemName: system_name, impactLevel: impact_level });
        return reply
          .type('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
          .header('content-disposition', attachment(`poam-fedramp-${stamp}.xlsx`))
          .send(buffer);
      }
      if (format === 'csv') {
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', attachment(`poam-${stamp}.csv`))
          .send(poamCsv(data));
      }
      if (format === 'oscal') {
        if (data.items.length === 0) throw conflict('no POA&M item matches: an OSCAL POA&M document needs at least one poam-item');
        const document = oscalPoam(data, `/api/v1/tenants/${scope.tenantId}`);
        return reply
          .type('application/json; charset=utf-8')
          .header('content-disposition', attachment(`poam-oscal-${stamp}.json`))
          .send(JSON.stringify(document, null, 2));
      }
      const body = {
        generated_at: now.toISOString(),
        tenant_id: scope.tenantId,
        workspace_id: scope.workspaceId,
        total: data.items.length,
        items: data.items.map(({ finding: _f, evidence: _e, ...item }) => item),
      };
      return reply
        .type('application/json; charset=utf-8')
        .header('content-disposition', attachment(`poam-${stamp}.json`))
        .send(JSON.stringify(body, null, 2));
    },
  );

  app.get(
    `${base}/:poamId`,
    {
      config: { permission: 'poam:read' },
      schema: {
        operationId: 'getPoamItem',
        tags,
        summary: 'One item with its comment log and evidence ids',
        params: ItemParams,
        response: withErrors({ 200: PoamItem }, [401, 403, 404]),
      },
    },
    async (request) => items.get(contextOf(request).scope, request.params.poamId),
  );

  app.put(
    `${base}/:poamId`,
    {
      config: { permission: 'poam:write' },
      schema: {
        operationId: 'updatePoamItem',
        tags,
        summary: 'Full update of the editable fields (status has its own endpoint)',
        description:
          'Replaces weakness_name, weakness_description, control_ids, severity, point_of_contact, milestones, vendor_dependency and deviation_request (omitted optional fields become empty); scheduled_completion is kept when omitted. The change is written to the comment log and the audit log. 409 for a closed item.',
        params: ItemParams,
        body: UpdateBody,
        response: withErrors({ 200: PoamItem }, [401, 403, 404, 409]),
      },
    },
    async (request) => items.update(contextOf(request), request.params.poamId, request.body),
  );

  app.delete(
    `${base}/:poamId`,
    {
      config: { permission: 'poam:write' },
      schema: {
        operationId: 'deletePoamItem',
        tags,
        summary: 'Delete an item and its evidence; the audit log keeps the item, its number is never reused',
        params: ItemParams,
        response: withErrors({ 200: PoamItem }, [401, 403, 404]),
      },
    },
    async (request) => {
      const { storageKeys, item } = await items.remove(contextOf(request), request.params.poamId);
      await evidence.deleteFiles(storageKeys);
      return item;
    },
  );

  app.patch(
    `${base}/:poamId/status`,
    {
      config: { permission: 'poam:write' },
      schema: {
        operationId: 'changePoamStatus',
        tags,
        summary: 'Move the item: open → in_progress → verification → closed, or back (in_progress → open, verification → in_progress)',
        description:
          'The comment is appended to the comment log with the move (required for a backward move). 400 unknown status, same status, or a move not in the table (closed is final); 409 closing without a linked evidence artifact.',
        params: ItemParams,
        body: StatusBody,
        response: withErrors({ 200: PoamItem }, [401, 403, 404, 409]),
      },
    },
    async (request) => items.changeStatus(contextOf(request), request.params.poamId, request.body),
  );

  app.post(
    `${base}/:poamId/comments`,
    {
      config: { permission: 'poam:write' },
      schema: {
        operationId: 'addPoamComment',
        tags,
        summary: 'Append a comment to the item’s comment log',
        params: ItemParams,
        body: CommentBody,
        response: withErrors({ 201: PoamItem }, [401, 403, 404]),
      },
    },
    async (request, reply) => reply.status(201).send(await items.addComment(contextOf(request), request.params.poamId, request.body)),
  );

  app.post(
    `${base}/:poamId/evidence`,
    {
      config: { permission: 'poam:write', rawBody: true },
      // The multipart parser leaves the body to the handler; the schema only documents the form.
      preValidation: async (request) => {
        request.body = {};
      },
      schema: {
        operationId: 'uploadPoamEvidence',
        tags,
        summary: 'Attach an evidence file (multipart, at most 50 MiB, SHA-256 recorded); closing needs at least one',
        description: '201 with the evidence record; 413 above 50 MiB (nothing is kept); 409 the item is closed; 503 without artifact storage.',
        consumes: ['multipart/form-data'],
        params: ItemParams,
        querystring: EvidenceUploadQuery,
        body: UploadForm,
        response: withErrors({ 201: Evidence }, [401, 403, 404, 409, 413, 503]),
      },
    },
    async (request, reply) => {
      const context = contextOf(request);
      await evidence.checkUploadTarget(context.scope, request.params.poamId);
      if (!request.isMultipart()) throw badRequest('expected a multipart/form-data upload with one file part');
      let description = request.query.description;
      let record;
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          if (part.fieldname === 'description' && typeof part.value === 'string') description = part.value;
          continue;
        }
        if (record) throw badRequest('one file per upload');
        record = await evidence.upload(context, request.params.poamId, { stream: part.file, filename: part.filename, contentType: part.mimetype, description });
      }
      if (!record) throw badRequest('the upload has no file part');
      return reply.status(201).send(record);
    },
  );

  app.get(
    `${base}/:poamId/evidence`,
    {
      config: { permission: 'poam:read' },
      schema: {
        operationId: 'listPoamEvidence',
        tags,
        summary: 'Evidence files of the item, oldest first',
        params: ItemParams,
        response: withErrors({ 200: EvidenceList }, [401, 403, 404]),
      },
    },
    async (request) => evidence.list(contextOf(request).scope, request.params.poamId),
  );

  app.get(
    `${base}/:poamId/evidence/:evidenceID`,
    {
      config: { permission: 'poam:read' },
      schema: {
        operationId: 'getPoamEvidence',
        summary: 'Metadata of a POA&M evidence file',
        tags,
        params: EvidenceParams,
        response: withErrors({ 200: Evidence }, [401, 403, 404]),
      },
    },
    async (request) => evidence.get(contextOf(request).scope, request.params.poamId, request.params.evidenceID),
  );

  app.get(
    `${base}/:poamId/evidence/:evidenceID/download`,
    {
      config: { permission: 'poam:read' },
      schema: {
        operationId: 'downloadPoamEvidence',
        tags,
        summary: 'The file as uploaded (x-checksum-sha256 carries its SHA-256)',
        params: EvidenceParams,
        produces: ['application/octet-stream'],
        response: withErrors({ 200: Binary }, [401, 403, 404, 410, 503]),
      },
    },
    async (request, reply) => {
      const { record, stream } = await evidence.download(contextOf(request).scope, request.params.poamId, request.params.evidenceID);
      reply
        .header('content-type', record.content_type)
        .header('content-length', String(record.size_bytes))
        .header('content-disposition', attachment(record.filename))
        .header('x-content-type-options', 'nosniff')
        .header('x-checksum-sha256', record.sha256);
      return reply.send(stream);
    },
  );

  app.delete(
    `${base}/:poamId/evidence/:evidenceID`,
    {
      config: { permission: 'poam:write' },
      schema: {
        operationId: 'deletePoamEvidence',
        tags,
        summary: 'Remove an evidence file (not from a closed item)',
        params: EvidenceParams,
        response: withErrors({ 200: Evidence }, [401, 403, 404, 409, 503]),
      },
    },
    async (request) => evidence.remove(contextOf(request), request.params.poamId, request.params.evidenceID),
  );
};
