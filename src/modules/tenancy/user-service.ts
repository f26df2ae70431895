import { inTenant } from '../../platform/db/scope.js';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { hashPassword, passwordProblem } from '../../platform/auth/passwords.js';
import { actorOf, writeAudit } from '../../platform/audit/audit-log.js';
import { badRequest, conflict, forbidden, notFound } from '../../platform/http/errors.js';
import { changeAccess } from '../../platform/auth/auth-cache.js';
import { offsetOf, toPage, type PageRequest } from '../../platform/http/pagination.js';
import { isRole, ROLE_LEVEL, ROLES, ROLE_PERMISSIONS, type Role } from '../../platform/rbac/roles.js';
import { createInvitationService, type InvitationService } from './invitation-service.js';
import { refreshSystemAdminFlag } from './subjects.js';
import './mfa-tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'authCache'>;

export const USERNAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._@+-]{2,63}$';
const INVALID_ROLE = `invalid role: must be one of ${ROLES.join(', ')}`;

/** The spec's role validation messages: empty is "role is required", unknown names the valid roles. */
export function parseRole(value: string | undefined | null): Role {
  if (value === undefined || value === null || value.trim() === '') throw badRequest('role is required');
  if (!isRole(value)) throw badRequest(INVALID_ROLE);
  return value;
}

export function rolesList() {
  return ROLES.map((role) => ({ role, permissions: [...ROLE_PERMISSIONS[role]], level: ROLE_LEVEL[role] }));
}

/** The acting user's level in the tenant (API keys act with the level of what they may do: none). */
function actingLevel(context: RequestContext): number {
  return context.actor.level;
}

export type AddResult = { user: { id: string; username: string; role: Role; created_at: Date } } | { invitation: Awaited<ReturnType<InvitationService['invite']>> };

/** A member of the tenant with their role (undefined when not a member). */
async function membership(db: Kysely<Database>, tenantId: string, userId: string) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.username', 'm.role', 'm.created_at', 'u.is_system_admin'])
    .where(inTenant(tenantId, 'm'))
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
}

/**
 * A system-admin's memberships are changed by system-admins only: whatever role the membership
 * holds in this tenant, its user runs the platform (a tenant admin could otherwise demote or remove
 * the operator from the tenant).
 */
async function belongsElsewhere(db: Kysely<Database>, tenantId: string, userId: string): Promise<boolean> {
  const other = await db.selectFrom('memberships').select('tenant_id').where('user_id', '=', userId).where('tenant_id', '<>', tenantId).limit(1).executeTakeFirst();
  return Boolean(other);
}

function protectSystemAdmin(context: RequestContext, target: { is_system_admin: boolean }) {
  if (target.is_system_admin && !context.actor.isSystemAdmin) {
    throw forbidden("cannot change a system-admin's membership: only a system-admin can");
  }
}

/** The role-change guard rails as they apply to adding and removing users (403, the spec's messages). */
function guard(context: RequestContext, newRole: Role | null, targetRole: Role | null) {
  if (newRole && ROLE_LEVEL[newRole] > actingLevel(context)) throw forbidden('cannot assign a role higher than your own');
  if (targetRole && ROLE_LEVEL[targetRole] > actingLevel(context)) {
    throw forbidden('cannot modify a user with higher role than your own');
  }
}

export function createUserService(deps: Deps) {
  const db = deps.database.db;
  const invitations = createInvitationService(deps);

  return {
    async list(context: RequestContext, page: PageRequest) {
      const base = db.selectFrom('memberships as m').innerJoin('users as u', 'u.id', 'm.user_id').where(inTenant(context.scope.tenantId, 'm'));
      const [items, count] = await Promise.all([
        base.select(['u.id', 'u.username', 'm.role', 'm.created_at']).orderBy('m.created_at').orderBy('u.id').limit(page.perPage).offset(offsetOf(page)).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return toPage(items, Number(count.n), page);
    },

    /**
     * An existing username is never linked without its user's consent (contracts section 2): a
     * system-admin links it at once (201); anyone else invites it (202, `invitations.invite`), with or
     * without a password (which is then ignored), and the user accepts or declines. A new username with
     * a password is a new user (201). Without a password, anyone but a system-admin invites the name
     * whether or not it exists, answered alike either way.
     */
    async add(context: RequestContext, input: { username: string; password?: string; role?: string }): Promise<AddResult> {
      const role = parseRole(input.role);
      guard(context, role, null);
      const tenantId = context.scope.tenantId;
      const username = input.username.toLowerCase();
      const now = deps.clock.now();
      // Checked before the name is looked up, so a bad password is answered alike for every name.
      if (input.password !== undefined) {
        const problem = passwordProblem(input.password);
        if (problem) throw badRequest(problem);
      }
      // One statement whether or not the name exists (no extra membership query that timing would show).
      const existing = await db
        .selectFrom('users as u')
        .leftJoin('memberships as m', (join) => join.onRef('m.user_id', '=', 'u.id').on(inTenant(tenantId, 'm')))
        .select(['u.id', 'm.role as member_role'])
        .where('u.username', '=', username)
        .executeTakeFirst();
      if (existing?.member_role) throw conflict(`user "${username}" already belongs to this tenant`);
      const link = existing !== undefined && context.actor.isSystemAdmin;
      if (!link && (existing !== undefined || input.password === undefined)) {
        if (!context.actor.isSystemAdmin) return { invitation: await invitations.invite(context, username, role) };
        throw badRequest('password is required');
      }
      const passwordHash = link ? null : await hashPassword(input.password!);
      const userId = existing?.id ?? randomUUID();
      await changeAccess(db, deps.authCache, async (trx) => {
        if (!link) {
          const tenant = await trx.selectFrom('tenants').select('account_id').where('id', '=', tenantId).executeTakeFirstOrThrow();
          await trx
            .insertInto('users')
            .values({ id: userId, username, password_hash: passwordHash, account_id: tenant.account_id, is_system_admin: false, created_at: now, updated_at: now })
            .execute();
        }
        await trx.insertInto('memberships').values({ user_id: userId, tenant_id: tenantId, role, created_at: now, updated_at: now }).execute();
        await refreshSystemAdminFlag(trx, userId);
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId,
          action: link ? 'user.linked' : 'user.created',
          targetType: 'user',
          targetId: userId,
          details: { username, role },
        });
      });
      const { is_system_admin: _flag, ...user } = (await membership(db, tenantId, userId))!;
      return { user };
    },

    /** The spec's four guard rails, checked in its order (membership before the target's level, which needs it). */
    async changeRole(context: RequestContext, userId: string, requested: string | undefined) {
      const role = parseRole(requested);
      const tenantId = context.scope.tenantId;
      if (context.actor.userId === userId) throw forbidden('cannot change your own role');
      if (ROLE_LEVEL[role] > actingLevel(context)) throw forbidden('cannot assign a role higher than your own');
      const target = await membership(db, tenantId, userId);
      if (!target) throw forbidden('user does not belong to this tenant');
      if (ROLE_LEVEL[target.role] > actingLevel(context)) throw forbidden('cannot modify a user with higher role than your own');
      protectSystemAdmin(context, target);
      await changeAccess(db, deps.authCache, async (trx) => {
        await trx.updateTable('memberships').set({ role, updated_at: deps.clock.now() }).where(inTenant(tenantId)).where('user_id', '=', userId).execute();
        await refreshSystemAdminFlag(trx, userId);
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId,
          action: 'user.role_changed',
          targetType: 'user',
          targetId: userId,
          details: { username: target.username, previous_role: target.role, new_role: role },
        });
      });
      return { id: target.id, username: target.username, created_at: target.created_at, role, previous_role: target.role };
    },

    async remove(context: RequestContext, userId: string) {
      const tenantId = context.scope.tenantId;
      const target = await membership(db, tenantId, userId);
      if (!target) throw notFound('user not found in this tenant');
      if (context.actor.userId === userId) throw forbidden('cannot remove yourself from the tenant');
      guard(context, null, target.role);
      protectSystemAdmin(context, target);
      await changeAccess(db, deps.authCache, async (trx) => {
        await trx.deleteFrom('memberships').where(inTenant(tenantId)).where('user_id', '=', userId).execute();
        await refreshSystemAdminFlag(trx, userId);
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId,
          action: 'user.removed',
          targetType: 'user',
          targetId: userId,
          details: { username: target.username, role: target.role },
        });
      });
    },

    /**
     * An administrator resets a member's second factor (the phone is lost and so are the recovery
     * codes): the authenticator, confirmed or pending, and every recovery code go, so the next sign-in
     * takes the password alone and the user enrolls again (at once if the tenant requires it). The
     * checks follow `remove`: a member of this tenant only (404 otherwise), never one's own (that
     * takes a code: DELETE /auth/mfa/totp), never a higher role or a system-admin's. Only a signed-in
     * administrator may: an API key is a script, and a script that can strip second factors turns a
     * leaked key into account takeovers.
     */
    async resetMfa(context: RequestContext, userId: string): Promise<void> {
      if (context.actor.type !== 'user') throw forbidden("resetting a user's multi-factor sign-in needs a signed-in administrator, not an API key");
      const tenantId = context.scope.tenantId;
      const target = await membership(db, tenantId, userId);
      if (!target) throw notFound('user not found in this tenant');
      if (context.actor.userId === userId) {
        throw forbidden('cannot reset your own multi-factor sign-in: turn it off with a current code (DELETE /api/v1/auth/mfa/totp)');
      }
      guard(context, null, target.role);
      protectSystemAdmin(context, target);
      // The second factor is the account's, not the membership's: it also guards the user's other
      // tenants. One tenant's administrator removing it would lower another tenant's protection (a
      // stolen password would then be enough to enroll a new authenticator there), so only a
      // system-admin may reset a user who belongs to more than one tenant.
      if (!context.actor.isSystemAdmin && (await belongsElsewhere(db, tenantId, userId))) {
        throw forbidden(`${target.username} also belongs to other tenants: only a system-admin can reset their multi-factor sign-in`);
      }
      const removed = await db.transaction().execute(async (trx) => {
        const totp = await trx.deleteFrom('user_totp').where('user_id', '=', userId).returning(['confirmed_at']).executeTakeFirst();
        const codes = await trx.deleteFrom('user_recovery_codes').where('user_id', '=', userId).returning(['used_at']).execute();
        if (!totp && codes.length === 0) return false;
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId,
          action: 'user.mfa_reset',
          targetType: 'user',
          targetId: userId,
          details: {
            username: target.username,
            authenticator: totp ? (totp.confirmed_at ? 'confirmed' : 'pending') : 'none',
            recovery_codes_removed: codes.filter((code) => code.used_at === null).length,
          },
        });
        return true;
      });
      if (!removed) throw conflict(`${target.username} has no multi-factor sign-in to reset`);
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
