import { inTenant } from '../../platform/db/scope.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { badRequest } from '../../platform/http/errors.js';
import { permissionsOf, type Role } from '../../platform/rbac/roles.js';
import '../../platform/auth/tables.js';
import { UUID_PATTERN } from '../../platform/http/schemas.js';

export interface Member {
  id: string;
  username: string;
  role: Role;
}

/**
 * Resolves "strings identifying users" (the spec's assignees): a user id or a username, of a member
 * of the tenant. Unknown ones are 400 naming them; the result keeps the order given, without duplicates.
 */
export async function resolveMembers(db: Kysely<Database>, tenantId: string, refs: string[], what: string): Promise<Member[]> {
  const wanted = refs.map((r) => r.trim()).filter(Boolean);
  if (wanted.length === 0) return [];
  const ids = wanted.filter((r) => UUID_PATTERN.test(r)).map((r) => r.toLowerCase());
  const names = wanted.map((r) => r.toLowerCase());
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.username', 'm.role'])
    .where(inTenant(tenantId, 'm'))
    .where('u.disabled_at', 'is', null)
    .where((eb) => eb.or([...(ids.length ? [eb('u.id', 'in', ids)] : []), eb('u.username', 'in', names)]))
    .execute();
  const result = new Map<string, Member>();
  for (const ref of wanted) {
    const lower = ref.toLowerCase();
    const found = rows.find((r) => r.id === lower || r.username === lower);
    if (!found) throw badRequest(`${what} "${ref}" is not a user of this tenant`);
    result.set(found.id, found);
  }
  return [...result.values()];
}

export function canReview(role: Role): boolean {
  return permissionsOf(role).has('assessment:review');
}

export async function usernames(db: Kysely<Database>, ids: Array<string | null>): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => !!id))];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'username']).where('id', 'in', wanted).execute();
  return new Map(rows.map((r) => [r.id, r.username]));
}

/** How records name who did something: `user:<id>` or `api_key:<id>`. */
export const actorRef = (context: RequestContext) => `${context.actor.type}:${context.actor.id}`;

/** Today's date (UTC) at the clock's now, as YYYY-MM-DD. */
export const today = (now: Date) => now.toISOString().slice(0, 10);
