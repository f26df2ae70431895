import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../module.js';
import { forbidden } from '../../platform/http/errors.js';
import { builtinRule } from './rule-catalog.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { Paged, TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createSettingsService } from './settings-service.js';
import { createRulesService } from './rules-service.js';
import { createAuditRunService } from './audit/audit-service.js';
import { createControlsService } from './controls/controls-service.js';
import { ControlCatalogPage, ControlCatalogQuery, controlCatalog } from './controls/control-catalog.js';
import { ControlGap, ControlsQuery, ControlsStatus, GapsQuery } from './controls/schemas.js';
import { AuditRun, AuditRunBody, ComplianceSettings, ComplianceSettingsUpdate, RuleInput, RuleListQuery, RuleParams, RuleSchema, RuleUpdate, RunParams } from './schemas.js';

/**
 * A built-in rule is read-only whatever the request says: the 403 comes before the body is parsed
 * or validated (after authentication and the permission check, which run on request), so a
 * malformed body cannot turn it into a 400.
 */
async function refuseBuiltinRule(request: FastifyRequest): Promise<void> {
  const { ruleID } = request.params as { ruleID?: unknown };
  if (typeof ruleID === 'string' && builtinRule(ruleID)) throw forbidden('built-in rules are read-only');
}

/** Framework settings, rules, audit runs and control status. */
// eslint-disable-next-line max-lines-per-function -- the module's route table, one short handler per route; splitting it into <thing>-routes.ts files is a follow-up of issue 26 not done in time
export const complianceRoutes: RoutePlugin = async (app, { deps }) => {
  const settings = createSettingsService(deps);
  const rules = createRulesService(deps);
  const audits = createAuditRunService(deps);
  const controls = createControlsService(deps);

  app.get(
    '/tenants/:tenantID/settings/compliance',
    {
      config: { permission: 'tenant:read' },
      schema: {
        operationId: 'getComplianceSettings',
        summary: 'Frameworks with their enabled state for the tenant, and its SLA windows',
        tags: ['compliance'],
        params: TenantParams,
        response: withErrors({ 200: ComplianceSettings }, [401, 403]),
      },
    },
    async (request) => settings.get(contextOf(request).scope.tenantId),
  );
  app.put(
    '/tenants/:tenantID/settings/compliance',
    {
      config: { permission: 'tenant:update' },
      schema: {
        operationId: 'updateComplianceSettings',
        tags: ['compliance'],
        summary: 'Enable or disable frameworks for the tenant, and set its SLA windows per severity',
        params: TenantParams,
        body: ComplianceSettingsUpdate,
        response: withErrors({ 200: ComplianceSettings }, [401, 403]),
      },
    },
    async (request) => settings.update(contextOf(request), request.body),
  );

  app.get(
    '/tenants/:tenantID/rules',
    {
      config: { permission: 'rules:read' },
      schema: {
        operationId: 'listRules',
        summary: 'Built-in and custom rules, filtered',
        tags: ['rules'],
        params: TenantParams,
        querystring: RuleListQuery,
        response: withErrors({ 200: Paged(RuleSchema) }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return rules.list(contextOf(request), filter, pageRequest({ page, per_page }));
    },
  );
  app.get(
    '/tenants/:tenantID/rules/:ruleID',
    {
      config: { permission: 'rules:read' },
      schema: {
        operationId: 'getRule',
        summary: 'A rule with its condition, control mappings and remediation',
        tags: ['rules'],
        params: RuleParams,
        response: withErrors({ 200: RuleSchema }, [401, 403, 404]),
      },
    },
    async (request) => rules.get(contextOf(request), request.params.ruleID),
  );
  app.post(
    '/tenants/:tenantID/rules',
    {
      config: { permission: 'rules:write' },
      schema: {
        operationId: 'createRule',
        tags: ['rules'],
        summary: 'Create a custom rule; its CEL condition is true when a resource violates it',
        params: TenantParams,
        body: RuleInput,
        response: withErrors({ 201: RuleSchema }, [401, 403, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await rules.create(contextOf(request), request.body)),
  );
  app.put(
    '/tenants/:tenantID/rules/:ruleID',
    {
      config: { permission: 'rules:write' },
      preParsing: refuseBuiltinRule,
      schema: {
        operationId: 'updateRule',
        tags: ['rules'],
        summary: 'Replace a custom rule (built-in rules are read-only: 403)',
        description:
          "Takes the rule's fields or the representation GET returns: read-only fields (id, builtin, terraform_fix_available, created_at, updated_at) " +
          "are ignored when they hold the rule's values and 400 naming the field otherwise (a different updated_at: the rule changed since it was read); " +
          'evaluation is ignored. A built-in rule is 403 whatever the body.',
        params: RuleParams,
        body: RuleUpdate,
        response: withErrors({ 200: RuleSchema }, [401, 403, 404]),
      },
    },
    async (request) => rules.update(contextOf(request), request.params.ruleID, request.body),
  );
  app.delete(
    '/tenants/:tenantID/rules/:ruleID',
    {
      config: { permission: 'rules:write' },
      preParsing: refuseBuiltinRule,
      schema: {
        operationId: 'deleteRule',
        tags: ['rules'],
        summary: 'Delete a custom rule and resolve its open findings (built-in rules: 403)',
        params: RuleParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404]),
      },
    },
    async (request, reply) => {
      await rules.delete(contextOf(request), request.params.ruleID);
      return reply.status(204).send();
    },
  );

  app.post(
    '/tenants/:tenantID/findings/run',
    {
      config: { permission: 'audit:run' },
      schema: {
        operationId: 'runAudit',
        tags: ['findings'],
        summary: 'Queue an audit of the workspace ({} = every enabled framework)',
        description: 'One audit per workspace is queued or running at a time: asking again returns that run.',
        params: TenantParams,
        body: AuditRunBody,
        response: withErrors({ 202: AuditRun }, [401, 403]),
      },
    },
    async (request, reply) => {
      const { scope, actor } = contextOf(request);
      return reply.status(202).send(await audits.start(scope, request.body?.framework, `${actor.type}:${actor.id}`));
    },
  );
  app.get(
    '/tenants/:tenantID/findings/runs/:jobID',
    {
      config: { permission: 'findings:read' },
      schema: {
        operationId: 'getAuditRun',
        summary: 'An audit run: status, frameworks, statistics and error',
        tags: ['findings'],
        params: RunParams,
        response: withErrors({ 200: AuditRun }, [401, 403, 404]),
      },
    },
    async (request) => audits.get(contextOf(request).scope, request.params.jobID),
  );

  app.get(
    '/tenants/:tenantID/controls/status',
    {
      config: { permission: 'findings:read', readCache: true },
      schema: {
        operationId: 'getControlsStatus',
        tags: ['controls'],
        summary: 'Compliance score, active findings by severity and by framework, and each control with its automated state and attestation status',
        params: TenantParams,
        querystring: ControlsQuery,
        response: withErrors({ 200: ControlsStatus }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return controls.status(contextOf(request).scope, filter, pageRequest({ page, per_page }));
    },
  );
  app.get(
    '/tenants/:tenantID/controls/catalog',
    {
      config: { permission: 'findings:read' },
      schema: {
        operationId: 'listFrameworkControls',
        tags: ['controls'],
        summary: "A framework's control catalog, searchable by id or title: what a questionnaire question can be mapped to",
        params: TenantParams,
        querystring: ControlCatalogQuery,
        response: withErrors({ 200: ControlCatalogPage }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, framework, ...filter } = request.query;
      return controlCatalog(framework, filter, pageRequest({ page, per_page }));
    },
  );
  app.get(
    '/tenants/:tenantID/controls/gaps',
    {
      config: { permission: 'findings:read', readCache: true },
      schema: {
        operationId: 'listControlGaps',
        tags: ['controls'],
        summary: 'Applicable controls that do not pass: failing, or covered only by questionnaires and not attested',
        params: TenantParams,
        querystring: GapsQuery,
        response: withErrors({ 200: Paged(ControlGap) }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, framework } = request.query;
      return controls.gaps(contextOf(request).scope, framework, pageRequest({ page, per_page }));
    },
  );
};
