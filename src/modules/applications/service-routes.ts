import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createBusinessServiceService } from './business-service.js';
import { createServiceSbom } from './sbom.js';
import { createCveExposure } from './cve-exposure.js';
import type { HostPackageSource } from './host-software.js';
import { CveExposure, CveExposureQuery, SbomDocument } from './exposure-schemas.js';
import { SBOM_CONTENT_TYPES, sbomFormat, SbomQuery } from '../agents/index.js';
import { AddApplicationsBody, Paged, Service, ServiceBody, ServiceDetail, ServiceListQuery, ServiceMemberParams, ServiceParams, ServiceSubParams } from './schemas.js';

const tags = ['business services'];

/** Business services: criticality, SLA tier, owner and member applications; roll-ups, SBOM, CVE exposure. */
// eslint-disable-next-line max-lines-per-function -- the module's route table, one short handler per route; splitting it into <thing>-routes.ts files is a follow-up of issue 26 not done in time
export function serviceRoutes(options: { hostPackages?: HostPackageSource } = {}): RoutePlugin {
  // eslint-disable-next-line max-lines-per-function -- the module's route table, one short handler per route; splitting it into <thing>-routes.ts files is a follow-up of issue 26 not done in time
  return async (app, { deps }) => {
    const services = createBusinessServiceService(deps);
    const sbom = createServiceSbom(deps, options.hostPackages);
    const exposure = createCveExposure(deps, options.hostPackages);

    app.get(
      '/tenants/:tenantID/services',
      {
        config: { permission: 'findings:read' },
        schema: {
          operationId: 'listBusinessServices',
          tags,
          summary: 'Business services with the roll-up of their applications (resources, findings by severity, health)',
          params: TenantParams,
          querystring: ServiceListQuery,
          response: withErrors({ 200: Paged(Service) }, [401, 403]),
        },
      },
      async (request) => {
        const { page, per_page, ...query } = request.query;
        return services.list(contextOf(request).scope, query, pageRequest({ page, per_page }));
      },
    );

    app.post(
      '/tenants/:tenantID/services',
      {
        config: { permission: 'applications:write' },
        schema: {
          operationId: 'createBusinessService',
          tags,
          summary: 'Create a business service, optionally with its member applications',
          description: '400 for unknown application ids (listed in details.unknown_application_ids); 409 when the name is taken.',
          params: TenantParams,
          body: ServiceBody,
          response: withErrors({ 201: ServiceDetail }, [401, 403, 409]),
        },
      },
      async (request, reply) => reply.status(201).send(await services.create(contextOf(request), request.body)),
    );

    app.get(
      '/tenants/:tenantID/services/:svcID',
      {
        config: { permission: 'findings:read' },
        schema: {
          operationId: 'getBusinessService',
          tags,
          summary: 'A business service with each member application and the roll-up from resources to applications to the service',
          params: ServiceParams,
          response: withErrors({ 200: ServiceDetail }, [401, 403, 404]),
        },
      },
      async (request) => services.get(contextOf(request).scope, request.params.svcID),
    );

    app.put(
      '/tenants/:tenantID/services/:svcID',
      {
        config: { permission: 'applications:write' },
        schema: {
          operationId: 'updateBusinessService',
          tags,
          summary: 'Replace the fields of a business service (members too when application_ids is given)',
          params: ServiceParams,
          body: ServiceBody,
          response: withErrors({ 200: ServiceDetail }, [401, 403, 404, 409]),
        },
      },
      async (request) => services.update(contextOf(request), request.params.svcID, request.body),
    );

    app.delete(
      '/tenants/:tenantID/services/:svcID',
      {
        config: { permission: 'applications:write' },
        schema: {
          operationId: 'deleteBusinessService',
          tags,
          summary: 'Delete a business service (its applications stay)',
          params: ServiceParams,
          response: withErrors({ 204: Type.Null() }, [401, 403, 404]),
        },
      },
      async (request, reply) => {
        await services.remove(contextOf(request), request.params.svcID);
        return reply.status(204).send();
      },
    );

    app.post(
      '/tenants/:tenantID/services/:svcID/applications',
      {
        config: { permission: 'applications:write' },
        schema: {
          operationId: 'addBusinessServiceApplications',
          tags,
          summary: 'Add member applications (already-members are ignored)',
          description: '400 for unknown application ids (details.unknown_application_ids).',
          params: ServiceParams,
          body: AddApplicationsBody,
          response: withErrors({ 200: ServiceDetail }, [401, 403, 404]),
        },
      },
      async (request) => services.addApplications(contextOf(request), request.params.svcID, request.body.application_ids),
    );

    app.delete(
      '/tenants/:tenantID/services/:svcID/applications/:appID',
      {
        config: { permission: 'applications:write' },
        schema: {
          operationId: 'removeBusinessServiceApplication',
          tags,
          summary: 'Remove a member application; 404 when it is not a member',
          params: ServiceMemberParams,
          response: withErrors({ 200: ServiceDetail }, [401, 403, 404]),
        },
      },
      async (request) => services.removeApplication(contextOf(request), request.params.svcID, request.params.appID),
    );

    app.get(
      '/tenants/:tenantID/services/:serviceID/sbom',
      {
        config: { permission: 'nodes:read' },
        schema: {
          operationId: 'getBusinessServiceSbom',
          tags,
          summary: "SBOM of the software on the service's hosts, with their known vulnerabilities (CycloneDX 1.5 JSON, or SPDX 2.3 JSON with ?format=spdx)",
          description:
            'Hosts are the member resources with agent data (properties.packages) and the agent host nodes joined to a member by a same_as or runs_on edge; ' +
            'each is a named device component (bom-ref: its node id). The vulnerabilities the agent matched on them are listed with ratings, description, fixed ' +
            'versions and the components they affect. Without agent data the answer is an empty, valid BOM whose metadata property controlgraph:hosts is 0. ' +
            '400 for an unknown format (the message names the formats).',
          params: ServiceSubParams,
          querystring: SbomQuery,
          produces: ['application/vnd.cyclonedx+json', 'application/spdx+json'],
          response: withErrors({ 200: SbomDocument }, [400, 401, 403, 404]),
        },
      },
      async (request, reply) => {
        const format = sbomFormat(request.query.format);
        const bom = await sbom(contextOf(request).scope, request.params.serviceID, format);
        return reply.header('content-type', SBOM_CONTENT_TYPES[format]).send(JSON.stringify(bom));
      },
    );

    app.get(
      '/tenants/:tenantID/services/:serviceID/cve-exposure',
      {
        config: { permission: 'findings:read' },
        schema: {
          operationId: 'getBusinessServiceCveExposure',
          tags,
          summary: 'CVEs reachable in the service (findings and host packages) with KEV and EPSS, sorted by risk',
          params: ServiceSubParams,
          querystring: CveExposureQuery,
          response: withErrors({ 200: CveExposure }, [401, 403, 404]),
        },
      },
      async (request) => {
        const { page, per_page, ...query } = request.query;
        return exposure(contextOf(request).scope, request.params.serviceID, query, pageRequest({ page, per_page }));
      },
    );
  };
}
