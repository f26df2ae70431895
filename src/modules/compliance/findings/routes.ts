import type { RoutePlugin } from '../../module.js';
import { contextOf } from '../../../platform/auth/authenticator.js';
import { pageRequest } from '../../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../../platform/http/schemas.js';
import { notFound } from '../../../platform/http/errors.js';
import { getNode } from '../../graph/index.js';
import { allRules } from '../rule-catalog.js';
import { patchAvailable, terraformPatch } from '../remediation/terraform-patch.js';
import { createFindingsService, filterOf } from './findings-service.js';
import { createGroupedFindings } from './grouped.js';
import { createScoredFindings } from './scored.js';
import { remediationFor } from './remediation.js';
import { requestCursor } from './findings-cursor.js';
import {
  CursorPaged,
  Finding,
  FindingGroup,
  FindingListQuery,
  FindingParams,
  GroupedQuery,
  Paged,
  Patch,
  Remediation,
  ResolveBody,
  ScoredFinding,
  ScoredQuery,
} from './schemas.js';

/** Findings: list, one, resolve, scored, grouped, remediation and Terraform patch. */
export function findingRoutes(): RoutePlugin {
  return async (app, { deps }) => {
    const findings = createFindingsService(deps);
    const grouped = createGroupedFindings(deps);
    const scored = createScoredFindings(deps);

    app.get(
      '/tenants/:tenantID/findings',
      {
        config: { permission: 'findings:read', readCache: true },
        schema: {
          operationId: 'listFindings',
          tags: ['findings'],
          summary: 'Findings of the workspace (default: open, sorted by -severity)',
          params: TenantParams,
          querystring: FindingListQuery,
          response: withErrors({ 200: CursorPaged(Finding) }, [400, 401, 403]),
        },
      },
      async (request) => {
        const { page, per_page, cursor, ...query } = request.query;
        return findings.list(contextOf(request).scope, query, pageRequest({ page, per_page }), requestCursor(request.url, cursor));
      },
    );

    // Registered before /findings/:findingID so these words are never read as finding ids.
    app.get(
      '/tenants/:tenantID/findings/scored',
      {
        config: { permission: 'findings:read', readCache: true },
        schema: {
          operationId: 'listScoredFindings',
          tags: ['findings'],
          summary: 'Findings ranked by a 0-100 risk score with the factors that made it',
          params: TenantParams,
          querystring: ScoredQuery,
          response: withErrors({ 200: CursorPaged(ScoredFinding) }, [400, 401, 403]),
        },
      },
      async (request) => {
        const { page, per_page, min_score, cursor, ...query } = request.query;
        return scored(contextOf(request).scope, filterOf(query), pageRequest({ page, per_page }), min_score, requestCursor(request.url, cursor));
      },
    );

    app.get(
      '/tenants/:tenantID/findings/grouped',
      {
        config: { permission: 'findings:read', readCache: true },
        schema: {
          operationId: 'listFindingGroups',
          tags: ['findings'],
          summary: 'Root-cause groups (same rule and same cause, or same rule, account and region when the rule names no cause); their group_id is what group acceptance takes',
          params: TenantParams,
          querystring: GroupedQuery,
          response: withErrors({ 200: Paged(FindingGroup) }, [401, 403]),
        },
      },
      async (request) => {
        const { page, per_page, ...query } = request.query;
        return grouped(contextOf(request).scope, filterOf(query), pageRequest({ page, per_page }));
      },
    );

    app.get(
      '/tenants/:tenantID/findings/:findingID',
      {
        config: { permission: 'findings:read' },
        schema: {
          operationId: 'getFinding',
          summary: 'A finding with its resource, control mappings and remediation',
          tags: ['findings'],
          params: FindingParams,
          response: withErrors({ 200: Finding }, [401, 403, 404]),
        },
      },
      async (request) => findings.get(contextOf(request).scope, request.params.findingID),
    );

    app.post(
      '/tenants/:tenantID/findings/:findingID/resolve',
      {
        config: { permission: 'findings:write' },
        schema: {
          operationId: 'resolveFinding',
          tags: ['findings'],
          summary: 'Mark a finding resolved (an audit reopens it if it still fails)',
          params: FindingParams,
          body: ResolveBody,
          response: withErrors({ 200: Finding }, [401, 403, 404, 409]),
        },
      },
      async (request) => findings.resolve(contextOf(request), request.params.findingID, request.body?.comment),
    );

    async function findingContext(tenantId: string, scope: { tenantId: string; workspaceId: string }, id: string) {
      const finding = await findings.get(scope, id);
      const rule = (await allRules(deps.database.db, tenantId)).find((r) => r.id === finding.rule_id);
      if (!rule) throw notFound('the rule of this finding no longer exists');
      const node = await getNode(deps.database.db, scope, finding.resource_id);
      return { finding, rule, node };
    }

    app.get(
      '/tenants/:tenantID/findings/:findingID/remediation',
      {
        config: { permission: 'findings:read' },
        schema: {
          operationId: 'getRemediation',
          summary: 'Remediation of a finding: summary, ordered steps, and whether a Terraform patch is available',
          tags: ['findings'],
          params: FindingParams,
          response: withErrors({ 200: Remediation }, [401, 403, 404]),
        },
      },
      async (request) => {
        const { scope } = contextOf(request);
        const { finding, rule, node } = await findingContext(scope.tenantId, scope, request.params.findingID);
        const available = Boolean(rule.definition && node && patchAvailable(rule.definition, node));
        return remediationFor(finding.id, rule, node, available);
      },
    );

    app.get(
      '/tenants/:tenantID/findings/:findingID/terraform-patch',
      {
        config: { permission: 'findings:read' },
        schema: {
          operationId: 'getTerraformPatch',
          tags: ['findings'],
          summary: 'A unified diff fixing the finding in Terraform (404 when none is available)',
          params: FindingParams,
          response: withErrors({ 200: Patch }, [401, 403, 404]),
        },
      },
      async (request) => {
        const { scope } = contextOf(request);
        const { finding, rule, node } = await findingContext(scope.tenantId, scope, request.params.findingID);
        const patch = rule.definition && node ? terraformPatch(rule.definition, node) : null;
        if (!patch) throw notFound('no Terraform patch is available for this finding');
        return { finding_id: finding.id, ...patch };
      },
    );
  };
}
