import { randomUUID } from 'node:crypto';
// A service's criticality counts in the stored risk score of its resources' findings.
import { rescoreFindings } from '../compliance/index.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInScope } from '../../platform/audit/audit-log.js';
import { badRequest, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { likePattern } from '../../platform/db/postgres.js';
import { anyOf, storedFilter } from './filter/sql.js';
import { rollups, type Group } from './rollup.js';
import { creatorOf, duplicateName, rowInScope } from './named.js';
import type { Criticality } from './tables.js';
import './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;
type ServiceRow = Selectable<Database['business_services']>;

export interface ServiceInput {
  name: string;
  description?: string;
  criticality: Criticality;
  sla_tier?: string | null;
  owner?: string | null;
  application_ids?: string[];
}

export interface MemberApplication {
  service_id: string;
  id: string;
  name: string;
  derived: boolean;
  filter: string;
  added_at: Date;
}

/** Member applications of the given services, by service, in name order. */
export async function membersOf(db: Kysely<Database>, scope: Scope, serviceIds: string[]): Promise<Map<string, MemberApplication[]>> {
  const byService = new Map<string, MemberApplication[]>(serviceIds.map((id) => [id, []]));
  if (serviceIds.length === 0) return byService;
  const rows = await db
    .selectFrom('business_service_applications as bsa')
    .innerJoin('applications as a', 'a.id', 'bsa.application_id')
    .select(['bsa.service_id', 'a.id', 'a.name', 'a.derived', 'a.filter', 'bsa.added_at'])
    .where(inWorkspace(scope, 'bsa'))
    .where('bsa.service_id', '=', sql<string>`ANY(${serviceIds}::uuid[])`)
    .orderBy(sql`lower(a.name)`)
    .orderBy('a.id')
    .execute();
  for (const row of rows) byService.get(row.service_id)?.push(row);
  return byService;
}

/** A business service's resources: the union of its applications' filters over `nodes AS alias`. */
export function servicePredicate(members: MemberApplication[], alias = 'n') {
  return anyOf(
    members.map((m) => storedFilter(m.filter)),
    alias,
  );
}

function presentService(row: ServiceRow, members: MemberApplication[], rollup: { resource_count: number; findings_by_severity: Record<string, number>; health: string }) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    criticality: row.criticality,
    sla_tier: row.sla_tier,
    owner: row.owner,
    application_count: members.length,
    resource_count: rollup.resource_count,
    findings_by_severity: rollup.findings_by_severity,
    health: rollup.health,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createBusinessServiceService(deps: Deps) {
  const db = deps.database.db;

  async function serviceRow(scope: Scope, id: string, trx: Kysely<Database> = db): Promise<ServiceRow> {
    const row = await rowInScope(trx, 'business_services', scope, id);
    if (!row) throw notFound('business service not found');
    return row;
  }

  /** 400 naming the ids that are not applications of the workspace. */
  async function checkApplications(trx: Kysely<Database>, scope: Scope, ids: string[]) {
    if (ids.length === 0) return;
    const found = await trx
      .selectFrom('applications')
      .select('id')
      .where(inWorkspace(scope))
      .where(inTenant(scope.tenantId))
      .where('id', '=', sql<string>`ANY(${ids}::uuid[])`)
      .execute();
    const known = new Set(found.map((r) => r.id));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length) throw badRequest(`unknown application${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, { unknown_application_ids: unknown });
  }

  async function addMembers(trx: Kysely<Database>, scope: Scope, serviceId: string, ids: string[]) {
    if (ids.length === 0) return;
    await trx
      .insertInto('business_service_applications')
      .values(ids.map((id) => ({ service_id: serviceId, application_id: id, workspace_id: scope.workspaceId, added_at: deps.clock.now() })))
      .onConflict((oc) => oc.columns(['service_id', 'application_id']).doNothing())
      .execute();
  }

  async function detail(scope: Scope, row: ServiceRow) {
    const members = (await membersOf(db, scope, [row.id])).get(row.id)!;
    const groups: Group[] = members.map((m) => ({ key: m.id, predicate: storedFilter(m.filter).predicate('n') }));
    groups.push({ key: `service:${row.id}`, predicate: servicePredicate(members) });
    const stats = await rollups(db, scope, deps.clock.now(), groups);
    return {
      ...presentService(row, members, stats.get(`service:${row.id}`)!),
      applications: members.map((m) => {
        const r = stats.get(m.id)!;
        return { id: m.id, name: m.name, derived: m.derived, added_at: m.added_at, ...r };
      }),
    };
  }

  return {
    async list(scope: Scope, query: { criticality?: Criticality; search?: string }, page: PageRequest) {
      let q = db.selectFrom('business_services').where(inWorkspace(scope)).where(inTenant(scope.tenantId));
      if (query.criticality) q = q.where('criticality', '=', query.criticality);
      if (query.search) q = q.where('name', 'ilike', likePattern(query.search));
      const [rows, count] = await Promise.all([
        q
          .selectAll()
          .orderBy(sql`lower(name)`)
          .orderBy('id')
          .limit(page.perPage)
          .offset(offsetOf(page))
          .execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      const members = await membersOf(
        db,
        scope,
        rows.map((r) => r.id),
      );
      const stats = await rollups(
        db,
        scope,
        deps.clock.now(),
        rows.map((r) => ({ key: r.id, predicate: servicePredicate(members.get(r.id)!) })),
      );
      return toPage(
        rows.map((r) => presentService(r, members.get(r.id)!, stats.get(r.id)!)),
        Number(count.n),
        page,
      );
    },

    async get(scope: Scope, id: string) {
      return detail(scope, await serviceRow(scope, id));
    },

    async create(context: RequestContext, input: ServiceInput) {
      const { scope } = context;
      const now = deps.clock.now();
      const name = input.name.trim();
      const row = await db
        .transaction()
        .execute(async (trx) => {
          await checkApplications(trx, scope, input.application_ids ?? []);
          const inserted = await trx
            .insertInto('business_services')
            .values({
              id: randomUUID(),
              tenant_id: scope.tenantId,
              workspace_id: scope.workspaceId,
              name,
              description: input.description?.trim() ?? '',
              criticality: input.criticality,
              sla_tier: input.sla_tier?.trim() || null,
              owner: input.owner?.trim() || null,
              created_by: creatorOf(context),
              created_at: now,
              updated_at: now,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          await addMembers(trx, scope, inserted.id, input.application_ids ?? []);
          await auditInScope(trx, deps.clock, context, {
            action: 'business_service.created',
            targetType: 'business_service',
            targetId: inserted.id,
            details: { name, criticality: input.criticality, application_ids: input.application_ids ?? [] },
          });
          await rescoreFindings(trx, scope, deps.clock.now());
          return inserted;
        })
        .catch(duplicateName('a business service', name));
      return detail(scope, row);
    },

    /** Full update of the service's fields; its members are replaced only when application_ids is given. */
    async update(context: RequestContext, id: string, input: ServiceInput) {
      const { scope } = context;
      const name = input.name.trim();
      const current = await serviceRow(scope, id);
      const row = await db
        .transaction()
        .execute(async (trx) => {
          if (input.application_ids) await checkApplications(trx, scope, input.application_ids);
          const updated = await trx
            .updateTable('business_services')
            .set({
              name,
              description: input.description?.trim() ?? '',
              criticality: input.criticality,
              sla_tier: input.sla_tier?.trim() || null,
              owner: input.owner?.trim() || null,
              updated_at: deps.clock.now(),
            })
            .where('id', '=', id)
            .where(inWorkspace(scope))
            .returningAll()
            .executeTakeFirstOrThrow();
          if (input.application_ids) {
            await trx
              .deleteFrom('business_service_applications')
              .where('service_id', '=', id)
              .where((eb) => eb.not(eb('application_id', '=', sql<string>`ANY(${input.application_ids}::uuid[])`)))
              .execute();
            await addMembers(trx, scope, id, input.application_ids);
          }
          await auditInScope(trx, deps.clock, context, {
            action: 'business_service.updated',
            targetType: 'business_service',
            targetId: id,
            details: {
              previous: { name: current.name, criticality: current.criticality, sla_tier: current.sla_tier, owner: current.owner },
              name,
              criticality: input.criticality,
              sla_tier: updated.sla_tier,
              owner: updated.owner,
              ...(input.application_ids ? { application_ids: input.application_ids } : {}),
            },
          });
          await rescoreFindings(trx, scope, deps.clock.now());
          return updated;
        })
        .catch(duplicateName('a business service', name));
      return detail(scope, row);
    },

    async remove(context: RequestContext, id: string) {
      const { scope } = context;
      const current = await serviceRow(scope, id);
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('business_services').where('id', '=', id).where(inWorkspace(scope)).execute();
        await auditInScope(trx, deps.clock, context, {
          action: 'business_service.deleted',
          targetType: 'business_service',
          targetId: id,
          details: { name: current.name },
        });
        await rescoreFindings(trx, scope, deps.clock.now());
      });
    },

    async addApplications(context: RequestContext, id: string, applicationIds: string[]) {
      const { scope } = context;
      await serviceRow(scope, id);
      await db.transaction().execute(async (trx) => {
        await checkApplications(trx, scope, applicationIds);
        await addMembers(trx, scope, id, applicationIds);
        await trx.updateTable('business_services').set({ updated_at: deps.clock.now() }).where('id', '=', id).execute();
        await auditInScope(trx, deps.clock, context, {
          action: 'business_service.applications_added',
          targetType: 'business_service',
          targetId: id,
          details: { application_ids: applicationIds },
        });
        await rescoreFindings(trx, scope, deps.clock.now());
      });
      return detail(scope, await serviceRow(scope, id));
    },

    async removeApplication(context: RequestContext, id: string, applicationId: string) {
      const { scope } = context;
      await serviceRow(scope, id);
      const removed = await db.transaction().execute(async (trx) => {
        const result = await trx
          .deleteFrom('business_service_applications')
          .where('service_id', '=', id)
          .where('application_id', '=', applicationId)
          .where(inWorkspace(scope))
          .executeTakeFirst();
        if (Number(result.numDeletedRows) === 0) return false;
        await trx.updateTable('business_services').set({ updated_at: deps.clock.now() }).where('id', '=', id).execute();
        await auditInScope(trx, deps.clock, context, {
          action: 'business_service.application_removed',
          targetType: 'business_service',
          targetId: id,
          details: { application_id: applicationId },
        });
        await rescoreFindings(trx, scope, deps.clock.now());
        return true;
      });
      if (!removed) throw notFound('the application is not a member of this business service');
      return detail(scope, await serviceRow(scope, id));
    },

    serviceRow,
  };
}

export type BusinessServiceService = ReturnType<typeof createBusinessServiceService>;
