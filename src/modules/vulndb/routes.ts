import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { auditInTenant } from '../../platform/audit/audit-log.js';
import { conflict } from '../../platform/http/errors.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { Paged, withErrors } from '../../platform/http/schemas.js';
import { enqueueJob } from '../../platform/jobs/queue.js';
import {
  CheckQuery,
  CheckResult,
  CveParams,
  ImportRun,
  ImportsQuery,
  KevPage,
  KevQuery,
  Stats,
  SyncAccepted,
  SyncJob,
  SyncJobParams,
  SyncQuery,
  VulnerabilityRecord,
} from './schemas.js';
import { createVulnService } from './service.js';
import { displayLocation, parseSourceSpecs, SYNC_JOB } from './sync-job.js';
import { importRoutes } from './import-routes.js';
import { outboundPolicyOf } from '../../platform/outbound/index.js';

const TAGS = ['vulnerability intelligence'];

/**
 * /api/v1/vulndb: a global store (no tenant in the path). Every authenticated caller may read;
 * syncing and the import history are for platform operators (system-admin, `platform:admin`).
 */
export const vulndbRoutes: RoutePlugin = async (app, { deps }) => {
  const service = createVulnService(deps);
  await app.register(importRoutes, { deps });

  app.get(
    '/vulndb/cve/:cveId',
    {
      schema: {
        operationId: 'getVulnerability',
        tags: TAGS,
        summary: 'The vulnerability record of a CVE (KEV, EPSS, NVD and OSV combined)',
        params: CveParams,
        response: withErrors({ 200: VulnerabilityRecord }, [401, 404, 429]),
      },
    },
    async (request) => service.getCve(request.params.cveId),
  );

  app.get(
    '/vulndb/check/:cveId',
    {
      schema: {
        operationId: 'checkVulnerability',
        tags: TAGS,
        summary: 'Whether a CVE is known-exploited (KEV) or has a high exploit-prediction score (EPSS >= 0.1)',
        params: CveParams,
        querystring: CheckQuery,
        response: withErrors({ 200: CheckResult }, [401, 429]),
      },
    },
    async (request) => service.check(request.params.cveId, request.query.epss_threshold),
  );

  app.get(
    '/vulndb/kev',
    {
      schema: {
        operationId: 'listKnownExploitedVulnerabilities',
        tags: TAGS,
        summary: 'The CISA KEV catalog, paged and filterable, with EPSS scores',
        querystring: KevQuery,
        response: withErrors({ 200: KevPage }, [401, 429]),
      },
    },
    async (request) => service.listKev(request.query, pageRequest(request.query)),
  );

  app.get(
    '/vulndb/stats',
    {
      schema: {
        operationId: 'getVulnerabilityStats',
        tags: TAGS,
        summary: 'Records per source, last sync time and result per source, data age',
        response: withErrors({ 200: Stats }, [401, 429]),
      },
    },
    async () => service.stats(),
  );

  app.post(
    '/vulndb/sync',
    {
      config: { permission: 'platform:admin', bodyless: true },
      schema: {
        operationId: 'syncVulnerabilityData',
        tags: TAGS,
        summary: 'Pull the configured sources now (a background job)',
        querystring: SyncQuery,
        response: withErrors({ 202: SyncAccepted }, [401, 403, 409, 429]),
      },
    },
    async (request, reply) => {
      const context = contextOf(request);
      const wanted = request.query.source;
      const specs = parseSourceSpecs(deps.config.vulndbSources, outboundPolicyOf(deps.config)).filter((s) => !wanted?.length || wanted.includes(s.source));
      if (specs.length === 0) {
        throw conflict(wanted?.length ? `no configured vulnerability source for ${wanted.join(', ')}` : 'no vulnerability sources configured (CONTROLGRAPH_VULNDB_SOURCES)');
      }
      const sources = [...new Set(specs.map((s) => s.source))];
      const job = await deps.database.db.transaction().execute(async (trx) => {
        const enqueued = await enqueueJob(trx, deps.clock, {
          kind: SYNC_JOB,
          payload: { trigger: 'manual', sources, requested_by: context.actor.id },
          dedupeKey: 'vulndb-sync-manual',
          maxAttempts: 3,
        });
        if (!enqueued.deduplicated) {
          await auditInTenant(trx, deps.clock, context, {
            action: 'vulndb.sync_requested',
            targetType: 'job',
            targetId: enqueued.id,
            details: { sources },
          });
        }
        const row = await trx.selectFrom('jobs').select(['status']).where('id', '=', enqueued.id).executeTakeFirstOrThrow();
        return { ...enqueued, status: row.status };
      });
      return reply.status(202).send({
        job_id: job.id,
        status: job.status === 'running' ? 'running' : 'queued',
        status_url: `/api/v1/vulndb/sync/${job.id}`,
        already_active: job.deduplicated,
        sources: specs.map((s) => ({ source: s.source, location: displayLocation(s.location)! })),
      });
    },
  );

  app.get(
    '/vulndb/sync/:jobId',
    {
      config: { permission: 'platform:admin' },
      schema: {
        operationId: 'getVulnerabilitySyncJob',
        tags: TAGS,
        summary: 'A sync (or seed) job and the import runs it made',
        params: SyncJobParams,
        response: withErrors({ 200: SyncJob }, [401, 403, 404, 429]),
      },
    },
    async (request) => service.getSyncJob(request.params.jobId),
  );

  app.get(
    '/vulndb/imports',
    {
      config: { permission: 'platform:admin' },
      schema: {
        operationId: 'listVulnerabilityImports',
        tags: TAGS,
        summary: 'Import runs (CLI, sync, seed and API imports), newest first, with progress and counts or where a broken file broke',
        querystring: ImportsQuery,
        response: withErrors({ 200: Paged(ImportRun) }, [401, 403, 429]),
      },
    },
    async (request) => service.listImports(request.query, pageRequest(request.query)),
  );
};
