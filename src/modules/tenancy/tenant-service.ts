import { inWorkspace, inTenant } from '../../platform/db/scope.js';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { actorOf, writeAudit } from '../../platform/audit/audit-log.js';
import { badRequest, conflict, forbidden, notFound } from '../../platform/http/errors.js';
import { changeAccess } from '../../platform/auth/auth-cache.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import type { Plan } from '../../platform/ratelimit/limiter.js';
import { slugify } from './slug.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'authCache'>;

export interface TenantInput {
  name: string;
  slug?: string;
  plan?: Plan;
}

const tenantColumns = ['t.id', 't.account_id', 't.name', 't.slug', 't.plan', 't.onboarding_completed', 't.created_at', 't.updated_at', 'w.id as default_workspace_id'] as const;

function tenantsWithDefaultWorkspace(db: Kysely<Database>) {
  return db
    .selectFrom('tenants as t')
    .leftJoin('workspaces as w', (join) => join.onRef('w.tenant_id', '=', 't.id').on('w.is_default', '=', true))
    .select(tenantColumns);
}

/**
 * Creates a tenant with its default workspace (and a membership for the creator, when given) in the
 * caller's transaction. Used by the API, the bootstrap and the CLI.
 */
export async function createTenantRows(
  trx: Kysely<Database>,
  now: Date,
  input: { accountId: string; name: string; slug: string; plan: Plan; creator?: { userId: string; role: 'tenant-admin' | 'system-admin' } },
): Promise<{ tenantId: string; workspaceId: string }> {
  const tenantId = randomUUID();
  const workspaceId = randomUUID();
  await trx
    .insertInto('tenants')
    .values({ id: tenantId, account_id: input.accountId, name: input.name, slug: input.slug, plan: input.plan, onboarding_completed: false, created_at: now, updated_at: now })
    .execute();
  await trx.insertInto('workspaces').values({ id: workspaceId, tenant_id: tenantId, name: 'default', is_default: true, created_at: now, updated_at: now }).execute();
  if (input.creator) {
    await trx.insertInto('memberships').values({ user_id: input.creator.userId, tenant_id: tenantId, role: input.creator.role, created_at: now, updated_at: now }).execute();
  }
  return { tenantId, workspaceId };
}

async function slugTaken(db: Kysely<Database>, slug: string): Promise<boolean> {
  return !!(await db.selectFrom('tenants').select('id').where('slug', '=', slug).executeTakeFirst());
}

/** Everything of a tenant or workspace that is not reached by foreign-key cascades. */
async function purgeUnreferenced(trx: Kysely<Database>, tenantId: string, workspaceId?: string): Promise<void> {
  let jobs = trx.deleteFrom('jobs').where(inTenant(tenantId));
  let events = trx.deleteFrom('outbox_events').where(inTenant(tenantId));
  if (workspaceId) {
    jobs = jobs.where(inWorkspace({ workspaceId }));
    events = events.where(inWorkspace({ workspaceId }));
  }
  await jobs.execute();
  await events.execute();
}

export function createTenantService(deps: Deps) {
  const db = deps.database.db;

  /**
   * The plan is the platform operator's decision (it sets rate limits and what is paid for): a
   * system-admin names any plan (default CONTROLGRAPH_DEFAULT_PLAN); anyone else's new tenant gets the
   * plan of the tenant they are signed in to, and naming another plan is 403.
   */
  async function planOfNewTenant(context: RequestContext, requested: Plan | undefined): Promise<Plan> {
    if (context.actor.isSystemAdmin) return requested ?? deps.config.defaultPlan;
    const current = await db.selectFrom('tenants').select('plan').where('id', '=', context.actor.tenantId).executeTakeFirstOrThrow();
    if (requested !== undefined && requested !== current.plan) {
      throw forbidden(`only a system-admin can choose the plan: a new tenant gets the plan of the tenant you are signed in to (${current.plan})`);
    }
    return current.plan;
  }

  return {
    /** Tenants of the caller's account that the caller can use. */
    async listForAccount(context: RequestContext, page: PageRequest) {
      const { actor } = context;
      let query = tenantsWithDefaultWorkspace(db).where('t.account_id', '=', actor.accountId);
      if (actor.type === 'api_key') query = query.where('t.id', 'in', actor.keyTenantIds ?? []);
      else if (!actor.isSystemAdmin) {
        query = query.where((eb) => eb.exists(eb.selectFrom('memberships as m').select('m.user_id').whereRef('m.tenant_id', '=', 't.id').where('m.user_id', '=', actor.userId!)));
      }
      const [rows, count] = await Promise.all([
        query.orderBy('t.created_at').orderBy('t.id').limit(page.perPage).offset(offsetOf(page)).execute(),
        query
          .clearSelect()
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return toPage(rows, Number(count.n), page);
    },

    async create(context: RequestContext, input: TenantInput) {
      if (context.actor.type !== 'user') throw forbidden('tenants are created with a user token');
      // Before anything else: a refused plan is 403 whatever the name or slug.
      const plan = await planOfNewTenant(context, input.plan);
      const name = input.name.trim();
      if (!name) throw badRequest('name is required');
      let slug = input.slug;
      if (slug !== undefined) {
        if (await slugTaken(db, slug)) throw conflict(`slug "${slug}" is already taken`);
      } else {
        slug = slugify(name);
        while (await slugTaken(db, slug)) slug = `${slugify(name).slice(0, 40)}-${randomBytes(3).toString('hex')}`;
      }
      const now = deps.clock.now();
      const { tenantId } = await db.transaction().execute(async (trx) => {
        const created = await createTenantRows(trx, now, {
          accountId: context.actor.accountId,
          name,
          slug: slug!,
          plan,
          creator: { userId: context.actor.userId!, role: 'tenant-admin' },
        });
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId: created.tenantId,
          action: 'tenant.created',
          targetType: 'tenant',
          targetId: created.tenantId,
          details: { name, slug, plan },
        });
        return created;
      });
      return this.get(tenantId);
    },

    async get(tenantId: string) {
      const row = await tenantsWithDefaultWorkspace(db).where('t.id', '=', tenantId).executeTakeFirst();
      if (!row) throw notFound('tenant not found');
      return row;
    },

    async update(context: RequestContext, tenantId: string, input: Partial<TenantInput> & { onboarding_completed?: boolean }) {
      const current = await this.get(tenantId);
      if (input.plan !== undefined && input.plan !== current.plan && !context.actor.isSystemAdmin) {
        throw forbidden('only a system-admin can change the plan');
      }
      if (input.slug !== undefined && input.slug !== current.slug && (await slugTaken(db, input.slug))) {
        throw conflict(`slug "${input.slug}" is already taken`);
      }
      const changes = {
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        ...(input.slug !== undefined ? { slug: input.slug } : {}),
        ...(input.plan !== undefined ? { plan: input.plan } : {}),
        ...(input.onboarding_completed !== undefined ? { onboarding_completed: input.onboarding_completed } : {}),
      };
      if (changes.name === '') throw badRequest('name must not be empty');
      // The plan decides the rate limit, which the authenticator caches with the identity.
      await changeAccess(db, deps.authCache, async (trx) => {
        await trx
          .updateTable('tenants')
          .set({ ...changes, updated_at: deps.clock.now() })
          .where('id', '=', tenantId)
          .execute();
        const previous = Object.fromEntries(Object.keys(changes).map((k) => [k, current[k as keyof typeof current]]));
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId,
          action: 'tenant.updated',
          targetType: 'tenant',
          targetId: tenantId,
          details: { previous, changes },
        });
      });
      return this.get(tenantId);
    },

    /** Deletes the tenant, its workspaces and all their data (foreign keys cascade from tenants). */
    async delete(context: RequestContext, tenantId: string) {
      const tenant = await this.get(tenantId);
      await changeAccess(db, deps.authCache, async (trx) => {
        await purgeUnreferenced(trx, tenantId);
        await trx.deleteFrom('tenants').where('id', '=', tenantId).execute();
        // The tenant's own audit log goes with it: record the deletion where the actor lives.
        if (context.actor.tenantId !== tenantId) {
          await writeAudit(trx, deps.clock, actorOf(context), {
            tenantId: context.actor.tenantId,
            action: 'tenant.deleted',
            targetType: 'tenant',
            targetId: tenantId,
            details: { name: tenant.name, slug: tenant.slug },
          });
        }
      });
    },
  };
}

export { purgeUnreferenced };
export type TenantService = ReturnType<typeof createTenantService>;
