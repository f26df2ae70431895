import { inTenant, inWorkspace, type Scope } from '../../platform/db/scope.js';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import './tables.js';

/**
 * True when a live risk acceptance (not revoked, not expired at `now`) covers the finding — through
 * a single-finding acceptance or a group acceptance whose snapshot holds it. Read from the finding's
 * accepted_until, which triggers keep (migration 0027) as the latest expiry of the unrevoked
 * acceptances covering it whose expiry the sweeper has not recorded; compared with the clock at read
 * time, so an acceptance stops applying at the exact moment it expires.
 */
export function acceptedAt(alias: string, now: Date): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(`${alias}.accepted_until`)} IS NOT NULL AND ${sql.ref(`${alias}.accepted_until`)} > ${now})`;
}

/**
 * Whether the workspace has any live acceptance at `now`. When it has none (the common case), queries
 * skip the per-finding acceptance check altogether.
 */
export async function hasLiveAcceptances(db: Kysely<Database>, workspaceId: string, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('risk_acceptances')
    .select('id')
    .where(inWorkspace({ workspaceId }))
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Open and not covered by a live acceptance: what counts, scores and alerts see. With `live` false
 * (the workspace has no live acceptance) it is just "open".
 */
export function activeAt(alias: string, now: Date, live = true): RawBuilder<boolean> {
  if (!live) return sql<boolean>`(${sql.ref(`${alias}.status`)} = 'open')`;
  return sql<boolean>`(${sql.ref(`${alias}.status`)} = 'open' AND NOT ${acceptedAt(alias, now)})`;
}

/** How many of the scope's unrevoked acceptances expire after `from` and by `to` (a forecast's assumptions). */
export async function acceptancesExpiringBetween(db: Kysely<Database>, scope: Scope, from: Date, to: Date): Promise<number> {
  const row = await db
    .selectFrom('risk_acceptances')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(inTenant(scope.tenantId))
    .where(inWorkspace(scope))
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', from)
    .where('expires_at', '<=', to)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
