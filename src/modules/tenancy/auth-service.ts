import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { hashSecret } from '../../platform/auth/api-key-secret.js';
import { timingDummyHash, verifyPassword } from '../../platform/auth/passwords.js';
import { actorOf, writeAudit } from '../../platform/audit/audit-log.js';
import { badRequest, forbidden, notFound, unauthorized } from '../../platform/http/errors.js';
import { announceAuthChange, changeAccess } from '../../platform/auth/auth-cache.js';
import { admitGuess, forgiveAddressGuess, forgiveGuesses, throttleKeys } from './login-throttle.js';
import { createMfaService, mfaInvalid, mfaRequired } from './mfa-service.js';
import { firstTenantOf, subjectFor } from './subjects.js';
import { issueTokens, type TokenResponse } from './tokens.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'tokenKey' | 'log' | 'authCache'>;

const FAILED_LOGIN = 'invalid username or password';

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createAuthService(deps: Deps) {
  const db = deps.database.db;
  const mfa = createMfaService(deps);

  return {
    /**
     * Logs into the user's first tenant. Same answer and cost whether the user exists or not. With an
     * authenticator enabled, the password alone answers 401 MFA_REQUIRED and `otp` (a TOTP or
     * recovery code) is needed; a wrong one stays counted as a failed guess, like a wrong password.
     */
    async login(username: string, password: string, ip: string, requestId: string, otp?: string): Promise<TokenResponse> {
      const keys = throttleKeys(username, ip);
      // Counted before the password is evaluated: a refused guess is never evaluated.
      const admitted = await admitGuess(db, deps.clock, keys);
      const user = await db.selectFrom('users').select(['id', 'username', 'password_hash', 'disabled_at']).where('username', '=', username.toLowerCase()).executeTakeFirst();
      const valid = await verifyPassword(password, user?.password_hash ?? (await timingDummyHash()));
      const tenantId = user ? await firstTenantOf(db, user.id) : null;
      const subject = valid && user && !user.disabled_at && tenantId ? await subjectFor(db, user.id, tenantId) : null;
      if (!subject) {
        if (user && tenantId) {
          await writeAudit(
            db,
            deps.clock,
            { type: 'user', id: user.id, name: user.username, ip, requestId },
            {
              tenantId,
              action: 'auth.login_failed',
              targetType: 'user',
              targetId: user.id,
            },
          );
        }
        deps.log.info({ username: username.toLowerCase(), ip }, 'login failed');
        throw unauthorized(FAILED_LOGIN);
      }
      const actor = { type: 'user' as const, id: subject.userId, name: subject.username, ip, requestId };
      // The password was right: a second factor, when the user has one, is asked for before anything is issued.
      const secondFactor = await mfa.enabledFor(subject.userId);
      if (secondFactor && otp === undefined) {
        await forgiveAddressGuess(db, keys);
        throw mfaRequired();
      }
      const tokens = await db.transaction().execute(async (trx) => {
        const factor = secondFactor ? await mfa.consume(trx, subject.userId, otp!) : null;
        if (secondFactor && !factor) return null;
        const issued = await issueTokens(trx, deps, subject, undefined, { passwordOnly: !factor });
        await writeAudit(trx, deps.clock, actor, {
          tenantId: subject.tenantId,
          workspaceId: subject.workspaceId,
          action: 'auth.login',
          targetType: 'user',
          targetId: subject.userId,
          ...(factor ? { details: { second_factor: factor } } : {}),
        });
        if (factor === 'recovery_code') {
          await writeAudit(trx, deps.clock, actor, {
            tenantId: subject.tenantId,
            action: 'auth.mfa_recovery_code_used',
            targetType: 'user',
            targetId: subject.userId,
            details: { recovery_codes_left: await mfa.codesLeft(trx, subject.userId) },
          });
        }
        return issued;
      });
      if (!tokens) {
        await writeAudit(db, deps.clock, actor, {
          tenantId: subject.tenantId,
          action: 'auth.login_failed',
          targetType: 'user',
          targetId: subject.userId,
          details: { reason: 'wrong one-time code' },
        });
        deps.log.info({ username: username.toLowerCase(), ip }, 'login failed: wrong one-time code');
        throw mfaInvalid();
      }
      await forgiveGuesses(db, keys, admitted);
      return tokens;
    },

    /**
     * Rotates a refresh token: it is spent and a new pair is issued in the same session. Presenting a
     * spent token again means it leaked: the whole session (chain and access tokens) is revoked.
     */
    async refresh(refreshToken: string, ip: string, requestId: string): Promise<TokenResponse> {
      const now = deps.clock.now();
      const row = await db
        .selectFrom('refresh_tokens as r')
        .innerJoin('sessions as s', 's.id', 'r.session_id')
        .select(['r.id', 'r.session_id', 'r.tenant_id', 'r.workspace_id', 'r.expires_at', 'r.used_at', 's.user_id', 's.revoked_at'])
        .where('r.token_hash', '=', hashSecret(refreshToken))
        .executeTakeFirst();
      if (!row) throw unauthorized('invalid refresh token');
      if (row.revoked_at) throw unauthorized('refresh token revoked');
      if (new Date(row.expires_at) <= now) throw unauthorized('refresh token expired');
      return db
        .transaction()
        .execute(async (trx) => {
          const spent = await trx.updateTable('refresh_tokens').set({ used_at: now }).where('id', '=', row.id).where('used_at', 'is', null).returning('id').executeTakeFirst();
          if (!spent) {
            await trx.updateTable('sessions').set({ revoked_at: now, revoked_reason: 'refresh token reuse' }).where('id', '=', row.session_id).execute();
            await announceAuthChange(trx);
            await writeAudit(
              trx,
              deps.clock,
              { type: 'user', id: row.user_id, name: 'refresh-token', ip, requestId },
              {
                tenantId: row.tenant_id,
                action: 'auth.refresh_reuse_detected',
                targetType: 'session',
                targetId: row.session_id,
              },
            );
            return null;
          }
          const subject = await subjectFor(trx, row.user_id, row.tenant_id, row.workspace_id);
          if (!subject) return 'no-access' as const;
          return issueTokens(trx, deps, subject, row.session_id);
        })
        .then((result) => {
          if (result === null) {
            deps.authCache.invalidate();
            throw unauthorized('refresh token already used: session revoked');
          }
          if (result === 'no-access') throw unauthorized('no longer a member of this tenant');
          return result;
        });
    },

    async selectTenant(context: RequestContext, tenantId: string): Promise<TokenResponse> {
      const userId = requireUser(context);
      const subject = await subjectFor(db, userId, tenantId);
      if (!subject) throw forbidden('no access to this tenant');
      return db.transaction().execute(async (trx) => {
        const tokens = await issueTokens(trx, deps, subject, context.actor.sessionId ?? undefined);
        await writeAudit(trx, deps.clock, actorOf(context), { tenantId, action: 'auth.tenant_selected', targetType: 'tenant', targetId: tenantId });
        return tokens;
      });
    },

    async switchWorkspace(context: RequestContext, workspaceId: string): Promise<TokenResponse> {
      const userId = requireUser(context);
      const subject = await subjectFor(db, userId, context.scope.tenantId, workspaceId);
      if (!subject) throw notFound('workspace not found');
      return db.transaction().execute(async (trx) => {
        const tokens = await issueTokens(trx, deps, subject, context.actor.sessionId ?? undefined);
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId: subject.tenantId,
          workspaceId,
          action: 'auth.workspace_switched',
          targetType: 'workspace',
          targetId: workspaceId,
        });
        return tokens;
      });
    },

    /** Revokes the access token's jti and its session (the refresh chain and every token issued in it). */
    async logout(context: RequestContext): Promise<void> {
      requireUser(context);
      const now = deps.clock.now();
      await changeAccess(db, deps.authCache, async (trx) => {
        await trx
          .insertInto('revoked_access_tokens')
          .values({ jti: context.actor.jti!, expires_at: context.actor.tokenExpiresAt ?? now })
          .onConflict((oc) => oc.column('jti').doNothing())
          .execute();
        await trx.updateTable('sessions').set({ revoked_at: now, revoked_reason: 'logout' }).where('id', '=', context.actor.sessionId!).where('revoked_at', 'is', null).execute();
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId: context.actor.tenantId,
          action: 'auth.logout',
          targetType: 'session',
          targetId: context.actor.sessionId!,
        });
      });
    },
  };
}

function requireUser(context: RequestContext): string {
  if (context.actor.type !== 'user' || !context.actor.userId) {
    throw badRequest('this operation needs a user token; API keys are bound to their tenant and workspace');
  }
  return context.actor.userId;
}

export type AuthService = ReturnType<typeof createAuthService>;
