import { Type } from 'typebox';
import type { RoutePlugin } from '../../module.js';
import { contextOf } from '../../../platform/auth/authenticator.js';
import { pageRequest } from '../../../platform/http/pagination.js';
import { Nullable, Paged, PageQuery, StringEnum, TenantParams, Timestamp, Uuid, withErrors } from '../../../platform/http/schemas.js';
import { FrameworkMappingSchema, FrameworkName } from '../schemas.js';
import { UNKNOWN_REASONS } from './tables.js';
import { listUnknowns } from './unknowns-list.js';

const Reason = StringEnum(UNKNOWN_REASONS, {
  description:
    'missing_configuration: a path the rule reads is absent and its content declares when_missing: unknown (missing_paths); ' +
    'evaluation_error: the condition failed on the resource (detail); budget_exceeded: the evaluation ran past its time budget, or the rule was stopped for the run for that (detail); ' +
    'not_collected: a host rule needs data the agent did not collect (missing_paths names it), or no item it read decides (detail)',
});

export const UnknownEvaluation = Type.Object({
  rule_id: Type.String(),
  title: Type.String({ description: 'the title findings of the rule carry' }),
  resource_id: Type.String(),
  resource_type: Type.String(),
  resource_name: Type.String(),
  region: Type.String(),
  account_id: Type.String(),
  framework: Type.String({ description: "the rule's primary framework" }),
  control_id: Type.String({ description: "the rule's primary control" }),
  framework_mappings: Type.Array(FrameworkMappingSchema, { description: 'the other controls the rule counts for: each is unknown while not failing' }),
  reason: Reason,
  missing_paths: Type.Array(Type.String(), { description: 'the property paths (schema form) or host collections the resource lacks' }),
  detail: Nullable(Type.String({ description: 'the error, or why no item decides' })),
  run_id: Nullable(Uuid),
  first_seen: Timestamp,
  last_seen: Timestamp,
});

const UnknownQuery = Type.Object(
  {
    framework: Type.Optional(FrameworkName),
    control_id: Type.Optional(Type.String({ maxLength: 50, description: "the rule's own control or a mapped one (of framework, when given)" })),
    rule_id: Type.Optional(Type.String({ maxLength: 100 })),
    resource_id: Type.Optional(Type.String({ maxLength: 1000 })),
    resource_type: Type.Optional(Type.String({ maxLength: 200 })),
    reason: Type.Optional(Reason),
    ...PageQuery,
  },
  { additionalProperties: false },
);

/** What the rules could not judge: GET /evaluations/unknown. */
export const unknownRoutes: RoutePlugin = async (app, { deps }) => {
  app.get(
    '/tenants/:tenantID/evaluations/unknown',
    {
      config: { permission: 'findings:read' },
      schema: {
        operationId: 'listUnknownEvaluations',
        tags: ['findings'],
        summary: 'Evaluations whose outcome is unknown: a rule could not judge a resource (missing configuration, an evaluation error)',
        description:
          'One item per (rule, resource) whose latest evaluation neither violated nor passed, with the paths the resource lacks or the error. ' +
          "Each keeps the rule's controls unknown (not passing) in /controls/status while no finding fails them.",
        params: TenantParams,
        querystring: UnknownQuery,
        response: withErrors({ 200: Paged(UnknownEvaluation) }, [401, 403]),
      },
    },
    async (request) => {
      const { page, per_page, ...filter } = request.query;
      return listUnknowns(deps.database.db, contextOf(request).scope, filter, pageRequest({ page, per_page }));
    },
  );
};
