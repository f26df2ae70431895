import { Type } from 'typebox';
import type { RoutePlugin } from '../../module.js';
import { AnyObject, Uuid, withErrors } from '../../../platform/http/schemas.js';
import { checkReadModel } from './consistency.js';
import { contextOf } from '../../../platform/auth/authenticator.js';
import { actorOf, writeAudit } from '../../../platform/audit/audit-log.js';

const CheckQuery = Type.Object(
  {
    workspace_id: Type.Optional(Uuid),
    repair: Type.Optional(Type.Boolean({ default: false, description: 'rebuild the rollups of the workspaces that differ from their rows' })),
  },
  { additionalProperties: false },
);

const CheckReport = Type.Object({
  consistent: Type.Boolean({ description: 'true when every rollup equals its recomputation (before any repair)' }),
  workspaces: Type.Integer({ description: 'workspaces compared' }),
  difference_count: Type.Integer(),
  differences: Type.Array(
    Type.Object({
      rollup: Type.String(),
      workspace_id: Type.String(),
      key: AnyObject,
      stored: Type.Integer(),
      expected: Type.Integer(),
    }),
    { description: 'the first 100 differences' },
  ),
  repaired: Type.Integer({ description: 'workspaces rebuilt from their rows' }),
});

/** POST /system/read-model/check: what `controlgraph check` asks a running service (system-admin). */
export const readModelCheckRoutes: RoutePlugin = async (app, { deps }) => {
  app.post(
    '/system/read-model/check',
    {
      config: { permission: 'platform:admin', bodyless: true },
      schema: {
        operationId: 'checkReadModel',
        tags: ['compliance'],
        summary: 'Recompute the findings read model from the findings and compare (optionally repair)',
        description: `Recomputes every count of the findings read model (per control and text, per root-cause group,
unknown evaluations per rule, per resource and per workspace) from finding_rows and evaluation_unknowns
and compares it with the stored rollups. \`repair=true\` rebuilds the workspaces that differ. What
\`controlgraph check\` runs. Audit-logged when it repairs (\`read_model.repaired\`).`,
        querystring: CheckQuery,
        response: withErrors({ 200: CheckReport }, [401, 403, 429]),
      },
    },
    async (request) => {
      const report = await checkReadModel(deps.database.db, { workspaceId: request.query.workspace_id, repair: request.query.repair });
      if (report.repaired > 0) {
        const context = contextOf(request);
        await writeAudit(deps.database.db, deps.clock, actorOf(context), {
          tenantId: context.scope.tenantId,
          action: 'read_model.repaired',
          targetType: 'read_model',
          targetId: request.query.workspace_id ?? 'all',
          details: { differences: report.difference_count, workspaces: report.repaired },
        });
      }
      return report;
    },
  );
};
