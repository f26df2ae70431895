import { inTenant } from '../../platform/db/scope.js';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { actorOf, writeAudit } from '../../platform/audit/audit-log.js';
import { changeAccess } from '../../platform/auth/auth-cache.js';
import { conflict, forbidden, gone, notFound } from '../../platform/http/errors.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import type { Role } from '../../platform/rbac/roles.js';
import type { InvitationRow } from './invitation-tables.js';
import { refreshSystemAdminFlag } from './subjects.js';
import './invitation-tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'authCache'>;

/**
 * Invitations into a tenant. A tenant admin cannot link an existing user into their tenant: the user
 * must agree. The invitation names a username; the answer, the audit entry and the tenant's list are
 * the same whether or not a user has that name (an invitation nobody can accept simply expires), so
 * inviting does not tell a tenant admin which usernames exist in other tenants.
 */

const columns = [
  'i.id',
  'i.tenant_id',
  't.name as tenant_name',
  't.slug as tenant_slug',
  'i.username',
  'i.role',
  'i.status',
  'i.invited_by_name',
  'i.created_at',
  'i.expires_at',
  'i.responded_at',
] as const;

type Joined = Pick<InvitationRow, 'id' | 'tenant_id' | 'username' | 'role' | 'status' | 'invited_by_name' | 'created_at' | 'expires_at' | 'responded_at'> & {
  tenant_name: string;
  tenant_slug: string;
};

function withTenant(db: Kysely<Database>) {
  return db.selectFrom('membership_invitations as i').innerJoin('tenants as t', 't.id', 'i.tenant_id');
}

export function createInvitationService(deps: Deps) {
  const db = deps.database.db;

  /** The API view: an open invitation past its expiry reads as `expired`. */
  function view(row: Joined) {
    const expired = row.status === 'pending' && new Date(row.expires_at) <= deps.clock.now();
    return {
      id: row.id,
      tenant_id: row.tenant_id,
      tenant_name: row.tenant_name,
      tenant_slug: row.tenant_slug,
      username: row.username,
      role: row.role,
      status: expired ? ('expired' as const) : row.status,
      invited_by: row.invited_by_name,
      created_at: row.created_at,
      expires_at: row.expires_at,
      responded_at: row.responded_at,
    };
  }

  function requireUser(context: RequestContext): string {
    if (context.actor.type !== 'user' || !context.actor.userId) throw forbidden('invitations are answered by their user: use a user token, not an API key');
    return context.actor.userId;
  }

  /** The caller's invitation, locked for the answer; another user's reads as not found. */
  async function mine(trx: Kysely<Database>, userId: string, id: string): Promise<InvitationRow> {
    const row = await trx.selectFrom('membership_invitations').selectAll().where('id', '=', id).where('user_id', '=', userId).forUpdate().executeTakeFirst();
    if (!row) throw notFound('invitation not found');
    if (row.status !== 'pending') throw conflict(`invitation already ${row.status}`);
    if (new Date(row.expires_at) <= deps.clock.now()) throw gone('invitation expired: ask the tenant admin to invite you again');
    return row;
  }

  async function answer(context: RequestContext, id: string, accept: boolean) {
    const userId = requireUser(context);
    const now = deps.clock.now();
    const invitationId = await changeAccess(db, deps.authCache, async (trx) => {
      const row = await mine(trx, userId, id);
      if (accept) {
        // Already a member (a system-admin linked the user meanwhile): the membership stays as it is.
        await trx
          .insertInto('memberships')
          .values({ user_id: userId, tenant_id: row.tenant_id, role: row.role, created_at: now, updated_at: now })
          .onConflict((oc) => oc.columns(['user_id', 'tenant_id']).doNothing())
          .execute();
        await refreshSystemAdminFlag(trx, userId);
      }
      await trx
        .updateTable('membership_invitations')
        .set({ status: accept ? 'accepted' : 'declined', responded_at: now })
        .where('id', '=', row.id)
        .execute();
      // Recorded in the inviting tenant, whose admins asked.
      await writeAudit(trx, deps.clock, actorOf(context), {
        tenantId: row.tenant_id,
        action: accept ? 'user.invitation_accepted' : 'user.invitation_declined',
        targetType: 'invitation',
        targetId: row.id,
        details: { username: row.username, role: row.role, user_id: userId },
      });
      return row.id;
    });
    return view((await withTenant(db).select(columns).where('i.id', '=', invitationId).executeTakeFirst())!);
  }

  return {
    /**
     * Invites `username` into the context's tenant with `role` (renewing an open invitation of the same
     * name). Same statements whatever the name, so neither answer nor timing says whether it exists.
     */
    async invite(context: RequestContext, username: string, role: Role) {
      const tenantId = context.scope.tenantId;
      const now = deps.clock.now();
      const expiresAt = new Date(now.getTime() + deps.config.invitationTtlMs);
      const id = await db.transaction().execute(async (trx) => {
        const user = await trx.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
        const inviter = {
          user_id: user?.id ?? null,
          role,
          invited_by_type: context.actor.type,
          invited_by_id: context.actor.id,
          invited_by_name: context.actor.name,
          expires_at: expiresAt,
        };
        const row = await trx
          .insertInto('membership_invitations')
          .values({ id: randomUUID(), tenant_id: tenantId, username, status: 'pending', created_at: now, ...inviter })
          .onConflict((oc) => oc.columns(['tenant_id', 'username']).where('status', '=', 'pending').doUpdateSet(inviter))
          .returning('id')
          .executeTakeFirstOrThrow();
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId,
          action: 'user.invited',
          targetType: 'invitation',
          targetId: row.id,
          details: { username, role, expires_at: expiresAt.toISOString() },
        });
        return row.id;
      });
      return view((await withTenant(db).select(columns).where('i.id', '=', id).executeTakeFirst())!);
    },

    /** The tenant's invitations, newest first (every state; an open one past its expiry is `expired`). */
    async listForTenant(context: RequestContext, page: PageRequest) {
      const base = withTenant(db).where(inTenant(context.scope.tenantId, 'i'));
      const [rows, count] = await Promise.all([
        base.select(columns).orderBy('i.created_at', 'desc').orderBy('i.id').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(rows.map(view), Number(count.n), page);
    },

    /** Withdraws an open invitation of the tenant (an answered one stays as it is: 409). */
    async revoke(context: RequestContext, id: string) {
      const tenantId = context.scope.tenantId;
      await db.transaction().execute(async (trx) => {
        const row = await trx
          .selectFrom('membership_invitations')
          .select(['id', 'username', 'role', 'status'])
          .where(inTenant(tenantId))
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!row) throw notFound('invitation not found');
        if (row.status !== 'pending') throw conflict(`invitation already ${row.status}`);
        await trx.updateTable('membership_invitations').set({ status: 'revoked', responded_at: deps.clock.now() }).where('id', '=', id).execute();
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId,
          action: 'user.invitation_revoked',
          targetType: 'invitation',
          targetId: id,
          details: { username: row.username, role: row.role },
        });
      });
    },

    /** The signed-in user's open invitations (not expired), newest first. */
    async listMine(context: RequestContext, page: PageRequest) {
      const userId = requireUser(context);
      const base = withTenant(db).where('i.user_id', '=', userId).where('i.status', '=', 'pending').where('i.expires_at', '>', deps.clock.now());
      const [rows, count] = await Promise.all([
        base.select(columns).orderBy('i.created_at', 'desc').orderBy('i.id').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(rows.map(view), Number(count.n), page);
    },

    accept: (context: RequestContext, id: string) => answer(context, id, true),
    decline: (context: RequestContext, id: string) => answer(context, id, false),
  };
}

export type InvitationService = ReturnType<typeof createInvitationService>;
