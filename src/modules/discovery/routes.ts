import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createDiscoveryService } from './discovery-service.js';
import { DiscoveryJob, JobCreate, JobList, JobListQuery, JobParams } from './schemas.js';

/** Discovery jobs (/jobs): jobs:read to look, jobs:write to create, start and cancel. */
export const discoveryRoutes: RoutePlugin = async (app, { deps }) => {
  const jobs = createDiscoveryService(deps);
  const tags = ['jobs'];

  app.post(
    '/tenants/:tenantID/jobs',
    {
      config: { permission: 'jobs:write' },
      schema: {
        operationId: 'createDiscoveryJob',
        tags,
        summary: 'Create a discovery job (plugins terraform-state and aws)',
        description:
          'Created pending (job.created); with start true it is queued at once. The terraform-state plugin takes the state file itself (config["terraform-state"].state, or a multipart upload to POST /jobs/terraform-state) or an S3 reference (state_uri); the aws plugin reads an account. state_uri and aws read with the cloud connection named in their connection_id (POST /cloud-connections); without one, only a tenant the operator granted the service\'s own credentials (CONTROLGRAPH_DISCOVERY_OWN_CREDENTIALS_TENANTS) may run them: 403 otherwise, before anything is stored or sent. 400 for an unknown plugin, config of a plugin not listed, a missing or malformed state, a connection_id not of this workspace.',
        params: TenantParams,
        body: JobCreate,
        response: withErrors({ 201: DiscoveryJob }, [401, 403, 413]),
      },
    },
    async (request, reply) => reply.status(201).send(await jobs.create(contextOf(request), request.body)),
  );

  app.get(
    '/tenants/:tenantID/jobs',
    {
      config: { permission: 'jobs:read' },
      schema: {
        operationId: 'listDiscoveryJobs',
        tags,
        summary: 'Discovery jobs of the workspace, newest first',
        description:
          'status filters by one or more states (comma-separated); older_than keeps jobs created longer ago than the duration (30s, 5m, 1h, 7d). 400 for an unknown status or a malformed duration.',
        params: TenantParams,
        querystring: JobListQuery,
        response: withErrors({ 200: JobList }, [401, 403]),
      },
    },
    async (request) => {
      const { status, older_than, page, per_page } = request.query;
      return jobs.list(contextOf(request).scope, { status, older_than }, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/jobs/:jobID',
    {
      config: { permission: 'jobs:read' },
      schema: { operationId: 'getDiscoveryJob', tags, summary: 'A discovery job', params: JobParams, response: withErrors({ 200: DiscoveryJob }, [401, 403, 404]) },
    },
    async (request) => jobs.get(contextOf(request).scope, request.params.jobID),
  );

  app.post(
    '/tenants/:tenantID/jobs/:jobID/start',
    {
      config: { permission: 'jobs:write', bodyless: true },
      schema: {
        operationId: 'startDiscoveryJob',
        tags,
        summary: 'Queue a pending discovery job',
        description: '202 with the job, now queued; job.started follows when a worker begins it. 409 unless the job is pending.',
        params: JobParams,
        response: withErrors({ 202: DiscoveryJob }, [401, 403, 404, 409]),
      },
    },
    async (request, reply) => reply.status(202).send(await jobs.start(contextOf(request), request.params.jobID)),
  );

  app.post(
    '/tenants/:tenantID/jobs/:jobID/cancel',
    {
      config: { permission: 'jobs:write', bodyless: true },
      schema: {
        operationId: 'cancelDiscoveryJob',
        tags,
        summary: 'Cancel a pending, queued or running discovery job',
        description: "job.cancelled. A running job stops at its worker's next heartbeat; nodes it already wrote stay. 409 for a completed, failed or cancelled job.",
        params: JobParams,
        response: withErrors({ 200: DiscoveryJob }, [401, 403, 404, 409]),
      },
    },
    async (request) => jobs.cancel(contextOf(request), request.params.jobID),
  );
};
