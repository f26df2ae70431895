import type { AppDeps } from '../../../deps.js';
import type { RequestContext } from '../../../platform/auth/actor.js';
import { inWorkspace, type Scope } from '../../../platform/db/scope.js';
import { auditInScope } from '../../../platform/audit/audit-log.js';
import { emitEvents } from '../../../platform/events/outbox.js';
import { badRequest, conflict, notFound } from '../../../platform/http/errors.js';
import { toPage, type PageRequest } from '../../../platform/http/pagination.js';
import { SEVERITIES } from '../rules/rule-types.js';
import { findingResolved } from './finding-events.js';
import { getFinding, type FindingFilter } from './findings-repo.js';
import { listFindings } from './findings-page.js';
import type { SlaFilter } from '../sla/sla-filter.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;

export interface ListQuery {
  id?: string;
  framework?: string;
  severity?: string;
  status?: FindingFilter['status'];
  resource_type?: string;
  resource_id?: string;
  control_id?: string;
  rule_id?: string;
  source?: string;
  group_id?: string;
  search?: string;
  sort?: string;
  sla?: SlaFilter;
}

export function parseSeverities(csv: string | undefined): string[] | undefined {
  if (!csv) return undefined;
  const values = csv
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  const bad = values.filter((v) => !(SEVERITIES as readonly string[]).includes(v));
  if (bad.length) throw badRequest(`severity: "${bad.join(', ')}" is not one of ${SEVERITIES.join(', ')}`);
  return values;
}

/** The list query's filter fields as a repository filter (status defaults to open). */
export function filterOf(query: Omit<ListQuery, 'id' | 'sort'>): FindingFilter {
  return {
    framework: query.framework,
    severities: parseSeverities(query.severity),
    status: query.status ?? 'open',
    resourceType: query.resource_type,
    resourceId: query.resource_id,
    controlId: query.control_id,
    ruleId: query.rule_id,
    source: query.source,
    groupId: query.group_id,
    search: query.search,
  };
}

export function createFindingsService(deps: Deps) {
  const db = deps.database.db;
  return {
    /** A page by number, or after `cursor` (keyset; `page` is then null in the answer). */
    async list(scope: Scope, query: ListQuery, page: PageRequest, cursor?: string) {
      const filter: FindingFilter = {
        ...filterOf(query),
        ids: query.id ? [query.id] : undefined,
        sla: query.sla,
        // Asking for one finding by id shows it whatever its status.
        status: query.status ?? (query.id ? 'all' : 'open'),
      };
      const { items, total, next_cursor } = await listFindings(db, scope, filter, query.sort ?? '-severity', page, deps.clock.now(), cursor);
      return { ...toPage(items, total, page), ...(cursor === undefined ? {} : { page: null }), next_cursor };
    },

    async get(scope: Scope, id: string) {
      const finding = await getFinding(db, scope, id, deps.clock.now());
      if (!finding) throw notFound('finding not found');
      return finding;
    },

    /** Marks an open (or accepted) finding resolved by a user; the next audit reopens it if it still fails. */
    async resolve(context: RequestContext, id: string, comment?: string) {
      const { scope } = context;
      const now = deps.clock.now();
      const current = await this.get(scope, id);
      if (current.status === 'resolved') throw conflict('finding is already resolved');
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('finding_rows')
          .set({ status: 'resolved', resolved_at: now, resolved_by: `${context.actor.type}:${context.actor.id}`, updated_at: now })
          .where(inWorkspace(scope))
          .where('id', '=', id)
          .execute();
        await emitEvents(trx, deps.clock, [findingResolved(scope, current, now, 'user')]);
        await auditInScope(trx, deps.clock, context, {
          action: 'finding.resolved',
          targetType: 'finding',
          targetId: id,
          details: comment ? { comment } : {},
        });
      });
      return this.get(scope, id);
    },
  };
}

export type FindingsService = ReturnType<typeof createFindingsService>;
