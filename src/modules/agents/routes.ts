import type { FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { Nullable, StringEnum, withErrors } from '../../platform/http/schemas.js';
import { createIngestService } from './ingest-service.js';
import { DEFAULT_LIMITS, readReportBody, type BodyLimits } from './report-body.js';
import { AgentReport, COLLECTIONS, COLLECTOR_STATUSES } from './report-schema.js';
import { cycloneDx, loadHostSbom, organisationOf, SBOM_CONTENT_TYPES, sbomFacts, sbomFormat, SbomQuery, spdx } from './sbom.js';

const AgentParams = Type.Object({ agentID: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', maxLength: 128 }) });
const NodeParams = Type.Object({ tenantID: Type.String(), id: Type.String({ minLength: 1, maxLength: 1000 }) });
const Counts = Type.Object({
  created: Type.Integer(),
  reopened: Type.Integer(),
  resolved: Type.Integer(),
  updated: Type.Integer(),
  open_vulnerable_packages: Type.Integer({ description: 'Installed packages (by manager and name) with at least one known vulnerability' }),
  open_vulnerabilities: Type.Integer({ description: 'Open CVE findings of the host: one per source package and vulnerability' }),
  drifted_files: Type.Integer(),
});

export const IngestResponse = Type.Object(
  {
    agent_id: Type.String(),
    node_id: Type.String({ description: 'host:<region>:host.os.instance:<machine_id>' }),
    scan_id: Type.String(),
    scanned_at: Type.String({ format: 'date-time' }),
    received_at: Type.String({ format: 'date-time' }),
    ignored: Type.Boolean({ description: 'true when the report was not applied: see reason' }),
    reason: Nullable(StringEnum(['out_of_order', 'duplicate'] as const)),
    message: Nullable(Type.String()),
    node: Type.Optional(StringEnum(['created', 'changed', 'unchanged'] as const)),
    packages: Type.Optional(Nullable(Type.Object({ total: Type.Integer(), added: Type.Integer(), updated: Type.Integer(), removed: Type.Integer(), vulnerable: Type.Integer() }))),
    package_matching: Type.Optional(
      Nullable(
        Type.Object(
          {
            enabled: Type.Boolean({ description: 'false when no package advisories (OSV) are loaded: package matching is off, no package was checked' }),
            ecosystems: Type.Array(Type.Object({ ecosystem: Type.String(), advisories_loaded: Type.Boolean() })),
            message: Nullable(Type.String({ description: 'Which packages were not checked and why; null when every ecosystem of the host has advisories' })),
          },
          { description: "Whether the vulnerability store could check this host's packages (packages.vulnerable is 0 when it could not)" },
        ),
      ),
    ),
    findings: Type.Optional(Counts),
    rules: Type.Optional(
      Type.Array(
        Type.Object({
          id: Type.String(),
          state: StringEnum(['violated', 'compliant', 'not_evaluated'] as const),
          reason: Type.Optional(Type.String()),
        }),
      ),
    ),
    collectors: Type.Optional(Type.Record(Type.String(), Type.Object({ status: StringEnum(COLLECTOR_STATUSES), reason: Nullable(Type.String()), items: Type.Integer() }))),
    sbom_version: Type.Optional(Type.Integer()),
    audit_run_id: Type.Optional(Nullable(Type.String({ description: 'the compliance audit queued because the host node changed' }))),
  },
  { description: 'What the server did with the report' },
);

const Document = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'CycloneDX 1.5 or SPDX 2.3 JSON document' });

const REPORT_DESCRIPTION = `The body is the report as JSON, gzip-compressed with \`Content-Encoding: gzip\` (plain JSON is accepted too).
Limits: ${DEFAULT_LIMITS.compressed / 1024 / 1024} MiB compressed and ${DEFAULT_LIMITS.decompressed / 1024 / 1024} MiB decompressed (413 beyond either, checked while streaming).
A report that does not match the schema is refused with 400 naming the failing path (\`details.errors[].path\`).
The tenant and workspace come from the API key (permission \`agents:write\`); an agent id belongs to the first tenant and workspace that
reported it (409 for any other). The collections are: ${COLLECTIONS.join(', ')}.
On receipt, in one transaction: the host node is upserted, packages are matched against the vulnerability store, findings of
vulnerable packages, host rules and config drift are created, updated, reopened or resolved, the host SBOM is updated, and a
compliance audit is queued when the node changed and a rule looks at host nodes. A report scanned before the last processed one of
the same host is not applied: 200 with \`ignored: true\` and \`reason: out_of_order\` (or \`duplicate\` for a scan id already processed).`;

export function agentRoutes(limits: BodyLimits = DEFAULT_LIMITS): RoutePlugin {
  return async (app, { deps }) => {
    const ingest = createIngestService(deps);

    // The report route lives in its own context: its body parser (streaming gunzip with limits) must
    // not apply to any other route.
    await app.register(async (plain) => {
      const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
      scope.addSchema({ ...AgentReport, $id: 'AgentReport' });
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', async (request: FastifyRequest, payload: Readable) => {
        const body = await readReportBody(request, payload, limits);
        request.agentReportSizes = { compressed: body.compressedBytes, raw: body.rawBytes };
        return body.value;
      });
      scope.post(
        '/agents/:agentID/report',
        {
          config: { permission: 'agents:write', rawBody: true },
          bodyLimit: limits.compressed,
          schema: {
            operationId: 'submitAgentReport',
            tags: ['agents'],
            summary: 'Submit the gzip-compressed report of a host after a scan cycle',
            description: REPORT_DESCRIPTION,
            consumes: ['application/json'],
            params: AgentParams,
            headers: Type.Object({ 'content-encoding': Type.Optional(Type.String({ description: 'gzip' })) }),
            body: Type.Unsafe<AgentReport>({ $ref: 'AgentReport#' }),
            response: withErrors({ 200: IngestResponse }, [401, 403, 409, 413, 429]),
          },
        },
        async (request) => {
          const sizes = request.agentReportSizes ?? { compressed: 0, raw: 0 };
          return ingest.ingest(contextOf(request), request.params.agentID, request.body as AgentReport, sizes);
        },
      );
    });

    app.get(
      '/tenants/:tenantID/nodes/:id/sbom',
      {
        config: { permission: 'nodes:read' },
        schema: {
          operationId: 'getNodeSbom',
          tags: ['agents', 'graph'],
          summary: 'Software bill of materials of a host node (CycloneDX 1.5 JSON, or SPDX 2.3 JSON with ?format=spdx)',
          description:
            'Built from the package inventory of the last processed agent report, with the known vulnerabilities of its packages ' +
            '(CycloneDX: ratings, description, fixed versions, affected ranges, the advisory database they come from; SPDX: SECURITY references). ' +
            'The serial number is stable per host; the version increases when the inventory changes. 400 for an unknown format (the message ' +
            'names the formats), 404 for an unknown node or a node without agent data.',
          params: NodeParams,
          querystring: SbomQuery,
          produces: ['application/vnd.cyclonedx+json', 'application/spdx+json'],
          response: withErrors({ 200: Document }, [400, 401, 403, 404]),
        },
      },
      async (request, reply) => {
        const { scope } = contextOf(request);
        const format = sbomFormat(request.query.format);
        const db = deps.database.db;
        const source = await loadHostSbom(db, scope, request.params.id);
        const [facts, organisation] = await Promise.all([sbomFacts(db, [source.host]), organisationOf(db, scope)]);
        const document = {
          subject: { kind: 'host' as const },
          hosts: [source.host],
          serial: source.serial,
          version: source.version,
          organisation,
          tool: { name: 'controlgraph', version: deps.version },
          now: deps.clock.now(),
          facts,
        };
        const body = format === 'spdx' ? spdx(document, `https://controlgraph.invalid/tenants/${scope.tenantId}`) : cycloneDx(document);
        return reply.type(SBOM_CONTENT_TYPES[format]).send(JSON.stringify(body));
      },
    );
  };
}
