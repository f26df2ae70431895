import type { AppDeps } from '../../deps.js';
import { verifyAccessToken, type AccessClaims } from '../../platform/auth/access-tokens.js';
import { hashSecret } from '../../platform/auth/api-key-secret.js';
import { changeAccess } from '../../platform/auth/auth-cache.js';
import { writeAudit } from '../../platform/audit/audit-log.js';
import '../../platform/auth/tables.js';
import './tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'tokenKey' | 'authCache'>;

interface Ending {
  sessionId: string;
  tenantId: string;
}

/**
 * The console's sign-out. Unlike POST /auth/logout it needs no valid access token: the browser may
 * hold only an expired one (or none) and still a refresh cookie whose session must end. Whatever
 * the cookies prove is revoked, as /auth/logout revokes (the access token's jti, the session and so
 * its refresh chain), with the same audit entry.
 */
export function createSessionService(deps: Deps) {
  const db = deps.database.db;

  /** The access cookie's claims when it is still a valid token of ours; an expired or forged one proves nothing. */
  async function accessClaims(token: string | null): Promise<AccessClaims | null> {
    if (!token) return null;
    return verifyAccessToken(await deps.tokenKey(), token, deps.clock.now()).catch(() => null);
  }

  /** The session of an unexpired refresh token (spent or not: ending a session is never unsafe). */
  async function refreshSession(token: string | null): Promise<Ending | null> {
    if (!token) return null;
    const row = await db.selectFrom('refresh_tokens').select(['session_id', 'tenant_id', 'expires_at']).where('token_hash', '=', hashSecret(token)).executeTakeFirst();
    if (!row || new Date(row.expires_at) <= deps.clock.now()) return null;
    return { sessionId: row.session_id, tenantId: row.tenant_id };
  }

  return {
    async end(cookies: { access: string | null; refresh: string | null }, meta: { ip: string; requestId: string }): Promise<void> {
      const claims = await accessClaims(cookies.access);
      const endings = new Map<string, Ending>();
      if (claims) endings.set(claims.sid, { sessionId: claims.sid, tenantId: claims.tenant_id });
      const fromRefresh = await refreshSession(cookies.refresh);
      if (fromRefresh && !endings.has(fromRefresh.sessionId)) endings.set(fromRefresh.sessionId, fromRefresh);
      if (endings.size === 0) return;
      const now = deps.clock.now();
      await changeAccess(db, deps.authCache, async (trx) => {
        if (claims) {
          await trx
            .insertInto('revoked_access_tokens')
            .values({ jti: claims.jti, expires_at: new Date(claims.exp * 1000) })
            .onConflict((oc) => oc.column('jti').doNothing())
            .execute();
        }
        for (const ending of endings.values()) {
          const revoked = await trx
            .updateTable('sessions')
            .set({ revoked_at: now, revoked_reason: 'logout' })
            .where('id', '=', ending.sessionId)
            .where('revoked_at', 'is', null)
            .returning('user_id')
            .executeTakeFirst();
          // A session that had already ended (signed out in another tab) is not logged twice.
          if (!revoked) continue;
          const user = await trx.selectFrom('users').select('username').where('id', '=', revoked.user_id).executeTakeFirst();
          await writeAudit(
            trx,
            deps.clock,
            { type: 'user', id: revoked.user_id, name: user?.username ?? 'unknown', ...meta },
            {
              tenantId: ending.tenantId,
              action: 'auth.logout',
              targetType: 'session',
              targetId: ending.sessionId,
            },
          );
        }
      });
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
