import multipart, { type Multipart } from '@fastify/multipart';
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { AppError, badRequest, payloadTooLarge } from '../../platform/http/errors.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createDiscoveryService } from './discovery-service.js';
import { DiscoveryJob, JobCreate } from './schemas.js';

const FIELDS = ['name', 'start', 'files', 'default_region', 'account_id'] as const;

/** Documents the form; the handler reads the parts itself. */
const UploadForm = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  properties: {
    name: { type: 'string', description: 'required: the job name' },
    start: { type: 'string', enum: ['true', 'false'], description: 'queue the job at once (default false)' },
    files: { type: 'string', description: 'the Terraform configuration as JSON text: {"<path>": "<text>", …}, so findings offer Terraform patches' },
    default_region: { type: 'string' },
    account_id: { type: 'string' },
    state: {
      type: 'string',
      format: 'binary',
      description: 'required: the state file (terraform.tfstate, JSON format version 4), at most CONTROLGRAPH_DISCOVERY_STATE_MAX_BYTES (64 MiB)',
    },
  },
  description: 'multipart/form-data: the fields, and one file part named state',
});

async function discard(stream: NodeJS.ReadableStream): Promise<void> {
  for await (const _ of stream) void _;
}

/** The state part, whole (a state is parsed whole anyway), or 413 past the limit: the rest is read and dropped. */
async function readState(part: Multipart & { type: 'file' }, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of part.file) {
    size += (chunk as Buffer).length;
    if (size > max) {
      await discard(part.file);
      throw payloadTooLarge(`the state file exceeds ${max} bytes (CONTROLGRAPH_DISCOVERY_STATE_MAX_BYTES)`, { max_bytes: max });
    }
    chunks.push(chunk as Buffer);
  }
  if (part.file.truncated) throw payloadTooLarge(`the state file exceeds ${max} bytes (CONTROLGRAPH_DISCOVERY_STATE_MAX_BYTES)`, { max_bytes: max });
  return Buffer.concat(chunks).toString('utf8');
}

/** The form's fields and state, as the JSON body of POST /jobs would give them, validated by the same schema. */
async function readForm(request: FastifyRequest, max: number) {
  const fields = new Map<string, string>();
  let state: string | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (!(FIELDS as readonly string[]).includes(part.fieldname))
          throw badRequest(`unknown form field "${part.fieldname}" (fields: ${FIELDS.join(', ')}, and the file part state)`);
        if (typeof part.value !== 'string' || part.valueTruncated) throw badRequest(`form field ${part.fieldname} must be text within the size limit`);
        fields.set(part.fieldname, part.value);
        continue;
      }
      if (part.fieldname !== 'state' || state !== null) {
        await discard(part.file);
        throw badRequest(part.fieldname === 'state' ? 'one state file per upload' : `unknown file part "${part.fieldname}": the state file goes in the part named state`);
      }
      state = await readState(part, max);
    }
  } catch (error) {
    // The multipart parser's own limits (parts, fields, field size) carry a 413.
    if (!(error instanceof AppError) && (error as { statusCode?: number }).statusCode === 413)
      throw payloadTooLarge('upload exceeds the multipart limits (one state file, a few fields)');
    throw error;
  }
  if (state === null) throw badRequest('no state file in the upload (multipart file part "state")');
  let files: unknown;
  if (fields.has('files')) {
    try {
      files = JSON.parse(fields.get('files')!);
    } catch (error) {
      throw badRequest(`form field files is not JSON: ${(error as Error).message}`);
    }
  }
  const tf: Record<string, unknown> = {};
  if (files !== undefined) tf.files = files;
  for (const key of ['default_region', 'account_id'] as const) if (fields.has(key)) tf[key] = fields.get(key);
  const body: Record<string, unknown> = { name: fields.get('name'), plugins: ['terraform-state'], config: { 'terraform-state': tf } };
  if (fields.has('start')) body.start = fields.get('start');
  // The same schema as the JSON body (with its coercion of start), so both paths accept the same jobs.
  const validate = request.compileValidationSchema(JobCreate);
  if (!validate(body)) throw Object.assign(new Error('invalid form'), { validation: validate.errors, validationContext: 'body' });
  tf.state = state;
  return body as { name: string; plugins: ['terraform-state']; config: { 'terraform-state': Record<string, unknown> }; start?: boolean };
}

/**
 * A terraform-state job from an uploaded state file (multipart), so a state never has to be reachable
 * by the service, nor fit the JSON body limit.
 */
export const discoveryUploadRoutes: RoutePlugin = async (app, { deps }) => {
  const max = deps.config.discoveryStateMaxBytes;
  // Registered here, so only this route parses multipart bodies. One byte over the limit shows it was passed.
  await app.register(multipart, { limits: { fileSize: max + 1, files: 1, fields: FIELDS.length, fieldSize: deps.config.bodyLimitBytes, parts: FIELDS.length + 1 } });
  const jobs = createDiscoveryService(deps);

  app.post(
    '/tenants/:tenantID/jobs/terraform-state',
    {
      config: { permission: 'jobs:write', rawBody: true },
      // The multipart parser leaves the body to the handler; the schema only documents the form.
      preValidation: async (request) => {
        request.body = {};
      },
      schema: {
        operationId: 'uploadTerraformStateJob',
        tags: ['jobs'],
        summary: 'Create a terraform-state discovery job from an uploaded state file (multipart)',
        description:
          'multipart/form-data: the fields name (required), start, files (JSON text), default_region and account_id, and one file part named state. The job is the one POST /jobs creates with config["terraform-state"].state; the state is checked the same way (400) and dropped from the job when it ends. 413 above CONTROLGRAPH_DISCOVERY_STATE_MAX_BYTES (default 64 MiB).',
        consumes: ['multipart/form-data'],
        params: TenantParams,
        body: UploadForm,
        response: withErrors({ 201: DiscoveryJob }, [401, 403, 413]),
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) throw badRequest('expected a multipart/form-data upload with a file part named state');
      const body = await readForm(request, max);
      return reply.status(201).send(await jobs.create(contextOf(request), body));
    },
  );
};
