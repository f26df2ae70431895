import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import { inWorkspace, inTenant, type Scope } from '../../platform/db/scope.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { auditInScope } from '../../platform/audit/audit-log.js';
import { notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { likePattern } from '../../platform/db/postgres.js';
import { compileFilter, storedFilter } from './filter/sql.js';
import { memberIds } from './rollup.js';
import { creatorOf, duplicateName, rowInScope } from './named.js';
import './tables.js';
import { nodeIdsMatching, nodesInScope } from '../graph/index.js';

type Deps = Pick<AppDeps, 'database' | 'clock'>;
type AssetGroupRow = Selectable<Database['asset_groups']>;

async function groupRow(db: Kysely<Database>, scope: Scope, id: string): Promise<AssetGroupRow> {
  const row = await rowInScope(db, 'asset_groups', scope, id);
  if (!row) throw notFound('asset group not found');
  return row;
}

/**
 * The members of an asset group as a predicate over `nodes AS alias`, for scoping other work by it
 * (reports: `POST /reports/generate {asset_group_id}`). 404 when the group is not in the scope.
 */
export async function assetGroupPredicate(db: Kysely<Database>, scope: Scope, id: string, alias = 'n'): Promise<RawBuilder<boolean>> {
  return storedFilter((await groupRow(db, scope, id)).filter).predicate(alias);
}

/** An asset group's id and name, when the scope holds it (reports name their group; undefined when it is gone). */
export function assetGroupName(db: Kysely<Database>, scope: Scope, id: string): Promise<{ id: string; name: string } | undefined> {
  return db.selectFrom('asset_groups').select(['id', 'name']).where('id', '=', id).where(inTenant(scope.tenantId)).where(inWorkspace(scope)).executeTakeFirst();
}

/** Every member node id of an asset group (reports scoped by a group). */
export async function assetGroupNodeIds(db: Kysely<Database>, scope: Scope, id: string): Promise<string[]> {
  const predicate = await assetGroupPredicate(db, scope, id);
  return nodeIdsMatching(db, scope, predicate);
}

export function createAssetGroupService(deps: Deps) {
  const db = deps.database.db;

  async function memberCounts(scope: Scope, rows: AssetGroupRow[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>(rows.map((r) => [r.id, 0]));
    if (rows.length === 0) return counts;
    const values = rows.map((r, i) => sql`(${i}::int, ${storedFilter(r.filter).predicate('n')})`);
    const result = await sql<{ g: number; n: number }>`
      SELECT k.g, count(*)::int AS n FROM ${nodesInScope(scope)} n CROSS JOIN LATERAL (VALUES ${sql.join(values)}) AS k(g, hit)
      WHERE k.hit GROUP BY k.g`.execute(db);
    for (const row of result.rows) counts.set(rows[row.g]!.id, row.n);
    return counts;
  }

  async function present(scope: Scope, rows: AssetGroupRow[]) {
    const counts = await memberCounts(scope, rows);
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      filter: r.filter,
      member_count: counts.get(r.id) ?? 0,
      created_by: r.created_by,
      created_at: r.created_at,
      updated_at: r.updated_at,
    }));
  }

  return {
    async list(scope: Scope, query: { search?: string }, page: PageRequest) {
      let q = db.selectFrom('asset_groups').where(inWorkspace(scope)).where(inTenant(scope.tenantId));
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
      return toPage(await present(scope, rows), Number(count.n), page);
    },

    async get(scope: Scope, id: string) {
      return (await present(scope, [await groupRow(db, scope, id)]))[0]!;
    },

    async create(context: RequestContext, input: { name: string; description?: string; filter: string }) {
      const { scope } = context;
      const filter = compileFilter(input.filter.trim());
      const name = input.name.trim();
      const now = deps.clock.now();
      const row = await db
        .transaction()
        .execute(async (trx) => {
          const inserted = await trx
            .insertInto('asset_groups')
            .values({
              id: randomUUID(),
              tenant_id: scope.tenantId,
              workspace_id: scope.workspaceId,
              name,
              description: input.description?.trim() ?? '',
              filter: filter.text,
              created_by: creatorOf(context),
              created_at: now,
              updated_at: now,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          await auditInScope(trx, deps.clock, context, {
            action: 'asset_group.created',
            targetType: 'asset_group',
            targetId: inserted.id,
            details: { name, filter: filter.text },
          });
          return inserted;
        })
        .catch(duplicateName('an asset group', name));
      return (await present(scope, [row]))[0]!;
    },

    async update(context: RequestContext, id: string, patch: { name?: string; description?: string; filter?: string }) {
      const { scope } = context;
      const current = await groupRow(db, scope, id);
      const filter = patch.filter === undefined ? null : compileFilter(patch.filter.trim());
      const name = patch.name?.trim() ?? current.name;
      const row = await db
        .transaction()
        .execute(async (trx) => {
          const updated = await trx
            .updateTable('asset_groups')
            .set({
              name,
              description: patch.description === undefined ? current.description : patch.description.trim(),
              filter: filter ? filter.text : current.filter,
              updated_at: deps.clock.now(),
            })
            .where('id', '=', id)
            .where(inWorkspace(scope))
            .returningAll()
            .executeTakeFirstOrThrow();
          await auditInScope(trx, deps.clock, context, {
            action: 'asset_group.updated',
            targetType: 'asset_group',
            targetId: id,
            details: { previous: { name: current.name, filter: current.filter }, name: updated.name, filter: updated.filter },
          });
          return updated;
        })
        .catch(duplicateName('an asset group', name));
      return (await present(scope, [row]))[0]!;
    },

    async remove(context: RequestContext, id: string) {
      const { scope } = context;
      const current = await groupRow(db, scope, id);
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('asset_groups').where('id', '=', id).where(inWorkspace(scope)).execute();
        await auditInScope(trx, deps.clock, context, {
          action: 'asset_group.deleted',
          targetType: 'asset_group',
          targetId: id,
          details: { name: current.name, filter: current.filter },
        });
      });
    },

    async members(scope: Scope, id: string, page: PageRequest) {
      const row = await groupRow(db, scope, id);
      const { items, total } = await memberIds(db, scope, storedFilter(row.filter).predicate('n'), page.perPage, offsetOf(page));
      return toPage(items, total, page);
    },

    async preview(scope: Scope, filterText: string, page: PageRequest) {
      const filter = compileFilter(filterText.trim());
      const { items, total } = await memberIds(db, scope, filter.predicate('n'), page.perPage, offsetOf(page));
      return { ...toPage(items, total, page), filter: filter.text };
    },
  };
}
