import { randomUUID } from 'node:crypto';
// The criticality of the services holding an application counts in its resources' stored risk scores.
import { rescoreFindings } from '../compliance/index.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInScope } from '../../platform/audit/audit-log.js';
import { conflict, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { likePattern } from '../../platform/db/postgres.js';
import { compileFilter, storedFilter } from './filter/sql.js';
import { syncDerivedApplications } from './derived.js';
import { creatorOf, duplicateName, rowInScope } from './named.js';
import { memberPage, rollups, type Rollup } from './rollup.js';
import type { Criticality } from './tables.js';
import './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;
export type ApplicationRow = Selectable<Database['applications']>;

export interface ApplicationInput {
  name: string;
  description?: string;
  filter: string;
}

/** The business services listing each application. */
export async function servicesOf(db: Kysely<Database>, appIds: string[]): Promise<Map<string, Array<{ id: string; name: string; criticality: Criticality }>>> {
  const byApp = new Map<string, Array<{ id: string; name: string; criticality: Criticality }>>();
  if (appIds.length === 0) return byApp;
  const rows = await db
    .selectFrom('business_service_applications as bsa')
    .innerJoin('business_services as s', 's.id', 'bsa.service_id')
    .select(['bsa.application_id', 's.id', 's.name', 's.criticality'])
    .where('bsa.application_id', '=', sql<string>`ANY(${appIds}::uuid[])`)
    .orderBy('s.name')
    .execute();
  for (const row of rows) {
    let list = byApp.get(row.application_id);
    if (!list) byApp.set(row.application_id, (list = []));
    list.push({ id: row.id, name: row.name, criticality: row.criticality });
  }
  return byApp;
}

function present(row: ApplicationRow, rollup: Rollup, services: Array<{ id: string; name: string; criticality: Criticality }>) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    filter: row.filter,
    derived: row.derived,
    derived_from: row.derived ? { tag_value: row.derived_value!, tag_keys: row.derived_keys } : null,
    resource_count: rollup.resource_count,
    findings_by_severity: rollup.findings_by_severity,
    health: rollup.health,
    services,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function createApplicationService(deps: Deps) {
  const db = deps.database.db;

  async function required(scope: Scope, id: string): Promise<ApplicationRow> {
    const row = await rowInScope(db, 'applications', scope, id);
    if (!row) throw notFound('application not found');
    return row;
  }

  async function presentAll(scope: Scope, rows: ApplicationRow[]) {
    const now = deps.clock.now();
    const [stats, services] = await Promise.all([
      rollups(
        db,
        scope,
        now,
        rows.map((row) => ({ key: row.id, predicate: storedFilter(row.filter).predicate('n') })),
      ),
      servicesOf(
        db,
        rows.map((r) => r.id),
      ),
    ]);
    return rows.map((row) => present(row, stats.get(row.id)!, services.get(row.id) ?? []));
  }

  function readOnlyIfDerived(row: ApplicationRow) {
    if (row.derived) {
      throw conflict(`application "${row.name}" is derived from resource tags and follows them: change the tags, or create a defined application with your own filter`, {
        derived_from: { tag_value: row.derived_value, tag_keys: row.derived_keys },
      });
    }
  }

  return {
    async list(scope: Scope, query: { derived?: boolean; search?: string }, page: PageRequest) {
      await syncDerivedApplications(db, scope, deps.clock.now());
      let q = db.selectFrom('applications').where(inWorkspace(scope)).where(inTenant(scope.tenantId));
      if (query.derived !== undefined) q = q.where('derived', '=', query.derived);
      if (query.search) q = q.where('name', 'ilike', likePattern(query.search));
      const [rows, count] = await Promise.all([
        q
          .selectAll()
          .orderBy(sql`lower(name)`)
          .orderBy('derived')
          .orderBy('id')
          .limit(page.perPage)
          .offset(offsetOf(page))
          .execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(await presentAll(scope, rows), Number(count.n), page);
    },

    async get(scope: Scope, id: string, page: PageRequest) {
      const row = await required(scope, id);
      const [app] = await presentAll(scope, [row]);
      const items = await memberPage(db, scope, deps.clock.now(), storedFilter(row.filter).predicate('n'), page.perPage, offsetOf(page));
      return { ...app!, resources: toPage(items, app!.resource_count, page) };
    },

    async create(context: RequestContext, input: ApplicationInput) {
      const { scope } = context;
      const filter = compileFilter(input.filter.trim());
      const now = deps.clock.now();
      const row = await db
        .transaction()
        .execute(async (trx) => {
          const inserted = await trx
            .insertInto('applications')
            .values({
              id: randomUUID(),
              tenant_id: scope.tenantId,
              workspace_id: scope.workspaceId,
              name: input.name.trim(),
              description: input.description?.trim() ?? '',
              filter: filter.text,
              derived: false,
              derived_value: null,
              derived_keys: [],
              created_by: creatorOf(context),
              created_at: now,
              updated_at: now,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          await auditInScope(trx, deps.clock, context, {
            action: 'application.created',
            targetType: 'application',
            targetId: inserted.id,
            details: { name: inserted.name, filter: inserted.filter },
          });
          return inserted;
        })
        .catch(duplicateName('an application', input.name.trim()));
      return (await presentAll(scope, [row]))[0]!;
    },

    async update(context: RequestContext, id: string, input: ApplicationInput) {
      const { scope } = context;
      const current = await required(scope, id);
      readOnlyIfDerived(current);
      const filter = compileFilter(input.filter.trim());
      const row = await db
        .transaction()
        .execute(async (trx) => {
          const updated = await trx
            .updateTable('applications')
            .set({ name: input.name.trim(), description: input.description?.trim() ?? '', filter: filter.text, updated_at: deps.clock.now() })
            .where('id', '=', id)
            .where(inWorkspace(scope))
            .returningAll()
            .executeTakeFirstOrThrow();
          await auditInScope(trx, deps.clock, context, {
            action: 'application.updated',
            targetType: 'application',
            targetId: id,
            details: { previous: { name: current.name, filter: current.filter }, name: updated.name, filter: updated.filter },
          });
          if (await inAService(trx, id)) await rescoreFindings(trx, scope, deps.clock.now());
          return updated;
        })
        .catch(duplicateName('an application', input.name.trim()));
      return (await presentAll(scope, [row]))[0]!;
    },

    async remove(context: RequestContext, id: string) {
      const { scope } = context;
      const current = await required(scope, id);
      readOnlyIfDerived(current);
      await db.transaction().execute(async (trx) => {
        const served = await inAService(trx, id);
        await trx.deleteFrom('applications').where('id', '=', id).where(inWorkspace(scope)).execute();
        await auditInScope(trx, deps.clock, context, {
          action: 'application.deleted',
          targetType: 'application',
          targetId: id,
          details: { name: current.name, filter: current.filter },
        });
        if (served) await rescoreFindings(trx, scope, deps.clock.now());
      });
    },
  };
}

export type ApplicationService = ReturnType<typeof createApplicationService>;

/** Whether a business service holds the application: only then does its filter count in risk scores. */
async function inAService(db: Kysely<Database>, applicationId: string): Promise<boolean> {
  const row = await db.selectFrom('business_service_applications').select('service_id').where('application_id', '=', applicationId).limit(1).executeTakeFirst();
  return row !== undefined;
}
