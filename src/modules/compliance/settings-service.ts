import { inTenant } from '../../platform/db/scope.js';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInTenant } from '../../platform/audit/audit-log.js';
import { badRequest } from '../../platform/http/errors.js';
import { FRAMEWORKS, type FrameworkId } from './rules/rule-types.js';
import { frameworks, isFrameworkId } from './frameworks.js';
import { allRules, ruleTouches } from './rule-catalog.js';
import { slaHours, updateSla, type SlaChanges } from './sla/sla-settings.js';

/** A PUT /settings/compliance body: either part, or both. */
export interface ComplianceSettingsChanges {
  frameworks?: Array<{ id: string; enabled: boolean }>;
  sla?: SlaChanges;
}

/**
 * Frameworks the tenant evaluates, in registry order: those it switched on, and those it never switched
 * whose catalog is on by default (the four core frameworks: absent row = enabled; the frameworks
 * carried as Prowler ships them are off until switched on).
 */
export async function enabledFrameworks(db: Kysely<Database>, tenantId: string): Promise<FrameworkId[]> {
  const rows = await db.selectFrom('compliance_settings').select(['framework', 'enabled']).where(inTenant(tenantId)).execute();
  const chosen = new Map(rows.map((r) => [r.framework, r.enabled]));
  return FRAMEWORKS.filter((f) => chosen.get(f) ?? frameworks().get(f)!.defaultEnabled);
}

export function createSettingsService(deps: Pick<AppDeps, 'database' | 'clock'>) {
  const db = deps.database.db;

  async function get(tenantId: string) {
    const enabled = new Set(await enabledFrameworks(db, tenantId));
    const rules = await allRules(db, tenantId);
    return {
      frameworks: FRAMEWORKS.map((id) => {
        const catalog = frameworks().get(id)!;
        return {
          id,
          name: catalog.name,
          version: catalog.version,
          enabled: enabled.has(id),
          default_enabled: catalog.defaultEnabled,
          controls: catalog.controls.size,
          rules: rules.filter((r) => ruleTouches(r, id)).length,
        };
      }),
      sla: await slaHours(db, tenantId),
    };
  }

  return {
    get,
    async update(context: RequestContext, body: ComplianceSettingsChanges) {
      const changes = body.frameworks ?? [];
      const unknown = changes.filter((c) => !isFrameworkId(c.id)).map((c) => c.id);
      if (unknown.length) throw badRequest(`unknown framework: ${unknown.join(', ')} (known: ${FRAMEWORKS.join(', ')})`);
      const now = deps.clock.now();
      await db.transaction().execute(async (trx) => {
        for (const change of changes) {
          await trx
            .insertInto('compliance_settings')
            .values({ tenant_id: context.scope.tenantId, framework: change.id, enabled: change.enabled, updated_at: now })
            .onConflict((oc) => oc.columns(['tenant_id', 'framework']).doUpdateSet({ enabled: change.enabled, updated_at: now }))
            .execute();
        }
        if (body.sla) await updateSla(trx, context.scope.tenantId, body.sla, now);
        await auditInTenant(trx, deps.clock, context, {
          action: 'compliance.settings_changed',
          targetType: 'compliance_settings',
          details: { ...(body.frameworks ? { frameworks: changes } : {}), ...(body.sla ? { sla: body.sla } : {}) },
        });
      });
      return get(context.scope.tenantId);
    },
  };
}
