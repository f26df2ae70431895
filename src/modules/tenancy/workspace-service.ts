import { inTenant } from '../../platform/db/scope.js';
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInTenant } from '../../platform/audit/audit-log.js';
import { badRequest, conflict, notFound } from '../../platform/http/errors.js';
import { changeAccess } from '../../platform/auth/auth-cache.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { isUniqueViolation } from '../../platform/db/postgres.js';
import { purgeUnreferenced } from './tenant-service.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'authCache'>;

const columns = ['id', 'tenant_id', 'name', 'is_default', 'created_at', 'updated_at'] as const;

/** Workspaces of the request's tenant; a workspace of another tenant reads as not found. */
export function createWorkspaceService(deps: Deps) {
  const db = deps.database.db;

  async function get(tenantId: string, id: string) {
    const row = await db.selectFrom('workspaces').select(columns).where(inTenant(tenantId)).where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('workspace not found');
    return row;
  }

  return {
    get: (context: RequestContext, id: string) => get(context.scope.tenantId, id),

    async list(context: RequestContext, page: PageRequest) {
      const base = db.selectFrom('workspaces').where(inTenant(context.scope.tenantId));
      const [items, count] = await Promise.all([
        base.select(columns).orderBy('is_default', 'desc').orderBy('created_at').orderBy('id').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(items, Number(count.n), page);
    },

    async create(context: RequestContext, name: string) {
      const trimmed = name.trim();
      if (!trimmed) throw badRequest('name is required');
      const now = deps.clock.now();
      const id = randomUUID();
      try {
        await db.transaction().execute(async (trx) => {
          await trx.insertInto('workspaces').values({ id, tenant_id: context.scope.tenantId, name: trimmed, is_default: false, created_at: now, updated_at: now }).execute();
          await auditInTenant(trx, deps.clock, context, {
            workspaceId: id,
            action: 'workspace.created',
            targetType: 'workspace',
            targetId: id,
            details: { name: trimmed },
          });
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict(`a workspace named "${trimmed}" already exists`);
        throw error;
      }
      return get(context.scope.tenantId, id);
    },

    async rename(context: RequestContext, id: string, name: string) {
      const current = await get(context.scope.tenantId, id);
      const trimmed = name.trim();
      if (!trimmed) throw badRequest('name is required');
      try {
        await db.transaction().execute(async (trx) => {
          await trx.updateTable('workspaces').set({ name: trimmed, updated_at: deps.clock.now() }).where('id', '=', id).execute();
          await auditInTenant(trx, deps.clock, context, {
            workspaceId: id,
            action: 'workspace.renamed',
            targetType: 'workspace',
            targetId: id,
            details: { previous: current.name, name: trimmed },
          });
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict(`a workspace named "${trimmed}" already exists`);
        throw error;
      }
      return get(context.scope.tenantId, id);
    },

    /** Deletes a workspace and all its data; the default (or only) workspace stays. */
    async delete(context: RequestContext, id: string) {
      const workspace = await get(context.scope.tenantId, id);
      if (workspace.is_default) throw badRequest('the default workspace cannot be deleted');
      const count = await db
        .selectFrom('workspaces')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where(inTenant(context.scope.tenantId))
        .executeTakeFirstOrThrow();
      if (Number(count.n) <= 1) throw badRequest('the only workspace cannot be deleted');
      await changeAccess(db, deps.authCache, async (trx) => {
        await purgeUnreferenced(trx, context.scope.tenantId, id);
        await trx.deleteFrom('workspaces').where('id', '=', id).execute();
        await auditInTenant(trx, deps.clock, context, {
          action: 'workspace.deleted',
          targetType: 'workspace',
          targetId: id,
          details: { name: workspace.name },
        });
      });
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;
