import { inTenant } from '../../platform/db/scope.js';
import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';

export interface AuditQuery {
  action?: string;
  actor_id?: string;
  actor_type?: 'user' | 'api_key' | 'system' | 'respondent_link';
  target_type?: string;
  target_id?: string;
  since?: string;
  until?: string;
}

/** The tenant's audit log, newest first. `action` accepts a prefix with `*` (e.g. `user.*`). */
export function createAuditLogService(deps: Pick<AppDeps, 'database'>) {
  const db = deps.database.db;
  return {
    async list(context: RequestContext, filters: AuditQuery, page: PageRequest) {
      let query = db.selectFrom('audit_logs').where(inTenant(context.scope.tenantId));
      if (filters.action) {
        query = filters.action.endsWith('*')
          ? query.where('action', 'like', filters.action.slice(0, -1).replace(/[%_\\]/g, '\\$&') + '%')
          : query.where('action', '=', filters.action);
      }
      if (filters.actor_id) query = query.where('actor_id', '=', filters.actor_id);
      if (filters.actor_type) query = query.where('actor_type', '=', filters.actor_type);
      if (filters.target_type) query = query.where('target_type', '=', filters.target_type);
      if (filters.target_id) query = query.where('target_id', '=', filters.target_id);
      if (filters.since) query = query.where('created_at', '>=', new Date(filters.since));
      if (filters.until) query = query.where('created_at', '<', new Date(filters.until));
      const [items, count] = await Promise.all([
        query
          .select(['id', 'action', 'actor_type', 'actor_id', 'actor_name', 'target_type', 'target_id', 'details', 'workspace_id', 'ip', 'request_id', 'created_at'])
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.perPage)
          .offset(offsetOf(page))
          .execute(),
        query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(items, Number(count.n), page);
    },
  };
}
