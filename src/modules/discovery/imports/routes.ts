import multipart from '@fastify/multipart';
import type { RoutePlugin } from '../../module.js';
import { contextOf } from '../../../platform/auth/authenticator.js';
import { badRequest, unavailable } from '../../../platform/http/errors.js';
import { pageRequest } from '../../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../../platform/http/schemas.js';
import { createImportService } from './import-service.js';
import { receiveImport } from './receive-upload.js';
import { ImportForm, ImportList, ImportListQuery, ImportParams, ImportResource } from './schemas.js';

const tags = ['imports'];

/** Scanner imports (issue 27; docs/imports.md): upload a scanner's output, follow its import. */
export const importRoutes: RoutePlugin = async (app, { deps }) => {
  const max = deps.config.importMaxBytes;
  // Registered here, so only this plugin's routes parse multipart bodies. One byte over the limit shows it was passed.
  await app.register(multipart, { limits: { fileSize: max + 1, files: 1, fields: 1, fieldSize: 1024, parts: 2 } });
  const imports = createImportService(deps);

  app.post(
    '/tenants/:tenantID/imports',
    {
      config: { permission: 'jobs:write', rawBody: true },
      // The multipart parser leaves the body to the handler; the schema only documents the form.
      preValidation: async (request) => {
        request.body = {};
      },
      schema: {
        operationId: 'createImport',
        tags,
        summary: "Import a scanner's output (multipart): Prowler JSON-OCSF, and the formats this build supports",
        description:
          'multipart/form-data: the optional field format (detected from the first 64 KiB when absent), then one file part named file (gzip accepted). The file is stored and parsed once: a malformed file is 400 naming the byte offset, and nothing is kept. A well-formed one is 202 with the import (status queued); a job applies it, and GET /imports/{id} shows its progress, counts and the records it could not read. 413 above CONTROLGRAPH_IMPORT_MAX_BYTES (default 512 MiB, unpacked).',
        consumes: ['multipart/form-data'],
        params: TenantParams,
        body: ImportForm,
        response: withErrors({ 202: ImportResource }, [401, 403, 413, 503]),
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) throw badRequest('expected a multipart/form-data upload with a file part named file');
      if (!deps.artifacts) throw unavailable('imports need an artifact store (ARTIFACT_STORE is none)');
      const context = contextOf(request);
      const file = await receiveImport(request, deps.artifacts, context.scope.tenantId, max);
      return reply.status(202).send(await imports.create(context, file));
    },
  );

  app.get(
    '/tenants/:tenantID/imports',
    {
      config: { permission: 'jobs:read' },
      schema: {
        operationId: 'listImports',
        tags,
        summary: 'Scanner imports of the workspace, newest first, by status and format',
        params: TenantParams,
        querystring: ImportListQuery,
        response: withErrors({ 200: ImportList }, [401, 403]),
      },
    },
    async (request) => {
      const { status, format, page, per_page } = request.query;
      return imports.list(contextOf(request).scope, { status, format }, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/imports/:importID',
    {
      config: { permission: 'jobs:read' },
      schema: {
        operationId: 'getImport',
        tags,
        summary: 'A scanner import: its status, counts and the records it could not read (the first 1,000)',
        params: ImportParams,
        response: withErrors({ 200: ImportResource }, [401, 403, 404]),
      },
    },
    async (request) => imports.get(contextOf(request).scope, request.params.importID),
  );
};
