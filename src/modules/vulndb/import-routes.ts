import multipart from '@fastify/multipart';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { badRequest } from '../../platform/http/errors.js';
import { withErrors } from '../../platform/http/schemas.js';
import { createApiImports, MAX_UPLOAD_FILES } from './api-imports.js';
import { ImportParams, ImportRun, ImportUrlBody } from './schemas.js';

const TAGS = ['vulnerability intelligence'];

const UPLOAD_DESCRIPTION = `Imports a KEV catalog (JSON or CSV), an EPSS score file, NVD CVE API 2.0 JSON or OSV JSON into the
store, as \`controlgraph vulndb import\` does, without a second process on the database.

- multipart/form-data: an optional field \`source\` (kev, epss, nvd, osv; detected from the content
  otherwise) and one or more file parts (gzip, zip and tar are recognised by their first bytes; an
  archive is read entry by entry: osv.dev's all.zip, nvdcve-2.0-YYYY.json.zip). Several files are one
  import, read as a directory is (NVD or OSV only). An archive with more than
  CONTROLGRAPH_VULNDB_ARCHIVE_MAX_ENTRIES entries, content expanding past
  CONTROLGRAPH_VULNDB_UNCOMPRESSED_MAX_BYTES, or an entry with an absolute or ".." path fails the
  import, nothing changed. The upload streams to the artifact store; all its
  files together may hold CONTROLGRAPH_VULNDB_UPLOAD_MAX_BYTES (default 2 GiB): 413 above, and
  nothing is kept.
- application/json \`{url, source?}\`: the service fetches the URL through its outbound policy.

Answers 202 with the import run (status queued); a worker carries it out. \`GET /vulndb/imports/{id}\`
shows the progress (bytes and records read) and the outcome (inserted, updated, deleted, unchanged,
or the error with where the file broke: a broken file changes nothing).`;

/** POST /vulndb/imports (upload or URL), GET /vulndb/imports/{id}, POST …/{id}/cancel: system-admin only. */
export const importRoutes: RoutePlugin = async (app, { deps }) => {
  // Registered here, so only this route parses multipart bodies.
  await app.register(multipart, {
    // One byte over the limit reaches the artifact store's meter, which refuses it (413) and keeps nothing.
    limits: { fileSize: deps.config.vulndbUploadMaxBytes + 1, files: MAX_UPLOAD_FILES + 1, fields: 5, fieldSize: 1_000, parts: MAX_UPLOAD_FILES + 6 },
  });
  const imports = createApiImports(deps);

  app.post(
    '/vulndb/imports',
    {
      config: { permission: 'platform:admin', rawBody: true },
      // A multipart body is read by the handler; the schema validates the JSON form.
      preValidation: async (request) => {
        if (request.isMultipart()) request.body = {};
      },
      schema: {
        operationId: 'importVulnerabilityData',
        tags: TAGS,
        summary: 'Import a KEV, EPSS, NVD or OSV file (multipart upload, gzip, zip or tar accepted) or URL, as a background job',
        description: UPLOAD_DESCRIPTION,
        consumes: ['multipart/form-data', 'application/json'],
        body: ImportUrlBody,
        response: withErrors({ 202: ImportRun }, [400, 401, 403, 413, 429, 503]),
      },
    },
    async (request, reply) => {
      const context = contextOf(request);
      if (request.isMultipart()) {
        const length = Number(request.headers['content-length']);
        const run = await imports.upload(context, request.parts(), Number.isFinite(length) ? length : null);
        return reply.status(202).send(run);
      }
      if (!request.body.url) throw badRequest('send a multipart/form-data upload, or JSON {"url": "https://…", "source": …}');
      return reply.status(202).send(await imports.fromUrl(context, request.body.url, request.body.source ?? null));
    },
  );

  app.get(
    '/vulndb/imports/:importId',
    {
      config: { permission: 'platform:admin' },
      schema: {
        operationId: 'getVulnerabilityImport',
        tags: TAGS,
        summary: 'One import run: its state, progress (bytes and records read) and outcome',
        params: ImportParams,
        response: withErrors({ 200: ImportRun }, [401, 403, 404, 429]),
      },
    },
    async (request) => imports.get(request.params.importId),
  );

  app.post(
    '/vulndb/imports/:importId/cancel',
    {
      config: { permission: 'platform:admin', bodyless: true },
      schema: {
        operationId: 'cancelVulnerabilityImport',
        tags: TAGS,
        summary: 'Cancel an API import that has not finished; nothing of it is applied',
        description: `A queued import ends \`cancelled\` at once (its upload is removed). A running one stops at its next
batch of records and then shows \`cancelled\`; until then it shows \`running\`. The previous data is
unchanged either way, unless the import was already being applied: that completes (\`succeeded\`).
409 for an import that finished already, or one not made through \`POST /vulndb/imports\`. Audit-logged
(\`vulndb.import_cancelled\`).`,
        params: ImportParams,
        response: withErrors({ 200: ImportRun }, [401, 403, 404, 409, 429]),
      },
    },
    async (request) => imports.cancel(contextOf(request), request.params.importId),
  );
};
