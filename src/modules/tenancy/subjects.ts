import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Role } from '../../platform/rbac/roles.js';
import type { SessionSubject } from './tokens.js';
import '../../platform/auth/tables.js';

/**
 * Who a user is in a tenant: their membership role (system-admins span tenants), and the workspace a
 * token would bind to (the given one if it belongs to the tenant, else the tenant's default).
 * Returns null when the user has no access to the tenant, or the workspace is not the tenant's.
 */
export async function subjectFor(db: Kysely<Database>, userId: string, tenantId: string, workspaceId?: string): Promise<SessionSubject | null> {
  const row = await db
    .selectFrom('users as u')
    .innerJoin('tenants as t', (join) => join.on('t.id', '=', tenantId))
    .leftJoin('memberships as m', (join) => join.onRef('m.user_id', '=', 'u.id').onRef('m.tenant_id', '=', 't.id'))
    .leftJoin('workspaces as w', (join) =>
      workspaceId ? join.onRef('w.tenant_id', '=', 't.id').on('w.id', '=', workspaceId) : join.onRef('w.tenant_id', '=', 't.id').on('w.is_default', '=', true),
    )
    .select(['u.id', 'u.username', 'u.account_id', 'u.is_system_admin', 'm.role', 'w.id as workspace_id', 't.onboarding_completed'])
    .where('u.id', '=', userId)
    .where('u.disabled_at', 'is', null)
    .executeTakeFirst();
  if (!row || !row.workspace_id) return null;
  const role: Role | null = row.is_system_admin ? 'system-admin' : row.role;
  if (!role) return null;
  return {
    userId: row.id,
    username: row.username,
    accountId: row.account_id,
    tenantId,
    workspaceId: row.workspace_id,
    role,
    onboardingCompleted: row.onboarding_completed,
  };
}

/** The user's first tenant: their oldest membership (contracts section 2). */
export async function firstTenantOf(db: Kysely<Database>, userId: string): Promise<string | null> {
  const row = await db.selectFrom('memberships').select('tenant_id').where('user_id', '=', userId).orderBy('created_at', 'asc').orderBy('seq', 'asc').limit(1).executeTakeFirst();
  return row?.tenant_id ?? null;
}

/** Keeps users.is_system_admin equal to "holds system-admin somewhere". */
export async function refreshSystemAdminFlag(db: Kysely<Database>, userId: string): Promise<void> {
  await db
    .updateTable('users')
    .set({
      is_system_admin: sql<boolean>`EXISTS (SELECT 1 FROM memberships WHERE user_id = ${userId} AND role = 'system-admin')`,
    })
    .where('id', '=', userId)
    .execute();
}
