import { sql, type Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/auth/actor.js';
import { actorOf, writeAudit } from '../../platform/audit/audit-log.js';
import { changeAccess } from '../../platform/auth/auth-cache.js';
import { AppError, badRequest, conflict, forbidden } from '../../platform/http/errors.js';
import { secretBoxFor, SecretError } from '../../platform/crypto/secret-box.js';
import { admitGuess, forgiveGuesses, throttleKeys } from './login-throttle.js';
import {
  acceptedTimeStep,
  enrollmentMaterial,
  hashRecoveryCode,
  looksLikeTotpCode,
  newRecoveryCodes,
  newTotpSecret,
  normalizeRecoveryCode,
  type EnrollmentMaterial,
} from './totp.js';
import './mfa-tables.js';

type Deps = Pick<AppDeps, 'database' | 'clock' | 'tokenKey' | 'authCache' | 'log'>;

/** Which second factor a code turned out to be. */
export type SecondFactor = 'totp' | 'recovery_code';
const ACCEPTED = ['totp', 'recovery_code'];

/** Login with a password right and no `otp`: the client asks for the code and sends both again. */
export const mfaRequired = () => new AppError(401, 'MFA_REQUIRED', 'this account needs its one-time code', { accepted: ACCEPTED, field: 'otp' });
/** Login with a wrong, expired or replayed code (it counts as a failed guess in the login throttle). */
export const mfaInvalid = () => new AppError(401, 'MFA_INVALID', 'the one-time code is wrong, expired or already used', { accepted: ACCEPTED, field: 'otp' });
const wrongCode = () => badRequest("the code is wrong, expired or already used: enter the authenticator's current 6-digit code or an unused recovery code");

/** The sealed secret's associated data: a sealed value copied to another user's row does not open. */
const sealContext = (userId: string) => `user-totp:${userId}`;

function requireUser(context: RequestContext): { userId: string; username: string } {
  if (context.actor.type !== 'user' || !context.actor.userId) {
    throw badRequest('multi-factor sign-in belongs to a user: call this with a user token, not an API key');
  }
  return { userId: context.actor.userId, username: context.actor.name };
}

// eslint-disable-next-line max-lines-per-function -- a service factory whose methods share its closure; each method is short, and moving them out is a follow-up of issue 26 not done in time
export function createMfaService(deps: Deps) {
  const db = deps.database.db;

  async function openSecret(userId: string, sealed: string): Promise<string | null> {
    try {
      return (await secretBoxFor(deps)).open<string>(sealed, sealContext(userId));
    } catch (error) {
      if (!(error instanceof SecretError)) throw error;
      // CONTROLGRAPH_SECRET changed: the authenticator cannot be checked; recovery codes still work.
      deps.log.warn({ userId, reason: error.message }, 'TOTP secret does not open');
      return null;
    }
  }

  async function confirmedRow(executor: Kysely<Database>, userId: string) {
    return executor.selectFrom('user_totp').select(['secret_sealed', 'last_time_step']).where('user_id', '=', userId).where('confirmed_at', 'is not', null).executeTakeFirst();
  }

  async function codesLeft(executor: Kysely<Database>, userId: string): Promise<number> {
    const row = await executor
      .selectFrom('user_recovery_codes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Replaces the user's recovery codes with new ones and returns them (the only time they are shown). */
  async function replaceRecoveryCodes(trx: Kysely<Database>, userId: string, now: Date): Promise<string[]> {
    const codes = newRecoveryCodes();
    await trx.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
    await trx
      .insertInto('user_recovery_codes')
      .values(codes.map((code) => ({ user_id: userId, code_hash: hashRecoveryCode(userId, normalizeRecoveryCode(code)!), used_at: null, created_at: now })))
      .execute();
    return codes;
  }

  /**
   * Spends a second factor of a user with a confirmed authenticator: a TOTP code newer than the last
   * one accepted, or an unused recovery code (burnt). Each is claimed by a conditional update, so two
   * parallel requests with the same code cannot both pass. Null when the code is not accepted.
   */
  async function consume(trx: Kysely<Database>, userId: string, code: string): Promise<SecondFactor | null> {
    const row = await confirmedRow(trx, userId);
    if (!row) return null;
    const now = deps.clock.now();
    const compact = code.replace(/\s/g, '');
    if (looksLikeTotpCode(compact)) {
      const secret = await openSecret(userId, row.secret_sealed);
      if (!secret) return null;
      const step = await acceptedTimeStep(secret, compact, now, row.last_time_step === null ? null : Number(row.last_time_step));
      if (step === null) return null;
      const claimed = await trx
        .updateTable('user_totp')
        .set({ last_time_step: step, updated_at: now })
        .where('user_id', '=', userId)
        .where(sql<boolean>`last_time_step IS NULL OR last_time_step < ${step}`)
        .returning('user_id')
        .executeTakeFirst();
      return claimed ? 'totp' : null;
    }
    const recovery = normalizeRecoveryCode(code);
    if (!recovery) return null;
    const burnt = await trx
      .updateTable('user_recovery_codes')
      .set({ used_at: now })
      .where('user_id', '=', userId)
      .where('code_hash', '=', hashRecoveryCode(userId, recovery))
      .where('used_at', 'is', null)
      .returning('user_id')
      .executeTakeFirst();
    return burnt ? 'recovery_code' : null;
  }

  /** A tenant the user belongs to (or the token's) requires multi-factor sign-in. */
  async function requiredForUser(context: RequestContext, userId: string): Promise<boolean> {
    const row = await sql<{ required: boolean }>`
      SELECT EXISTS (
        SELECT 1 FROM tenants t
        WHERE t.mfa_required
          AND (t.id = ${context.actor.tenantId} OR t.id IN (SELECT m.tenant_id FROM memberships m WHERE m.user_id = ${userId}))
      ) AS required`.execute(db);
    return row.rows[0]?.required ?? false;
  }

  /**
   * Runs a change that needs a second factor of the signed-in user. Its codes are guesses like
   * passwords (same throttle: a stolen session cannot try a million codes to turn MFA off); a code
   * that passes forgives them.
   */
  async function withSecondFactor<T>(context: RequestContext, code: string, change: (trx: Kysely<Database>, userId: string, factor: SecondFactor) => Promise<T>): Promise<T> {
    const { userId, username } = requireUser(context);
    if (!(await confirmedRow(db, userId))) throw conflict('multi-factor sign-in is not enabled for this account');
    const keys = throttleKeys(username, context.ip);
    const admitted = await admitGuess(db, deps.clock, keys);
    const result = await db.transaction().execute(async (trx) => {
      const factor = await consume(trx, userId, code);
      return factor ? { value: await change(trx, userId, factor) } : null;
    });
    if (!result) throw wrongCode();
    await forgiveGuesses(db, keys, admitted);
    return result.value;
  }

  return {
    consume,

    /** Whether a login of this user needs a second factor (a confirmed authenticator). */
    async enabledFor(userId: string): Promise<boolean> {
      return !!(await confirmedRow(db, userId));
    },

    codesLeft,

    async status(context: RequestContext) {
      const { userId } = requireUser(context);
      const [totp, user, left, required] = await Promise.all([
        db.selectFrom('user_totp').select(['confirmed_at']).where('user_id', '=', userId).executeTakeFirst(),
        db.selectFrom('users').select(['password_hash']).where('id', '=', userId).executeTakeFirstOrThrow(),
        codesLeft(db, userId),
        requiredForUser(context, userId),
      ]);
      return {
        totp_enabled: !!totp?.confirmed_at,
        enrollment_pending: !!totp && !totp.confirmed_at,
        recovery_codes_left: totp?.confirmed_at ? left : 0,
        required_by_tenant: required,
        enrollment_required: context.actor.mfaEnrollmentRequired === true,
        password_sign_in: user.password_hash !== null,
      };
    },

    /** Starts (or restarts) an enrollment: a new secret, pending until confirmed with a code. */
    async enroll(context: RequestContext): Promise<EnrollmentMaterial> {
      const { userId, username } = requireUser(context);
      const user = await db.selectFrom('users').select(['password_hash']).where('id', '=', userId).executeTakeFirstOrThrow();
      if (user.password_hash === null) {
        throw conflict('this account signs in through single sign-on, without a password: its identity provider decides about a second factor');
      }
      if (await confirmedRow(db, userId)) {
        throw conflict('multi-factor sign-in is already enabled: turn it off (DELETE /api/v1/auth/mfa/totp) before enrolling another authenticator');
      }
      const secret = newTotpSecret();
      const sealed = (await secretBoxFor(deps)).seal(secret, sealContext(userId));
      const now = deps.clock.now();
      await db
        .insertInto('user_totp')
        .values({ user_id: userId, secret_sealed: sealed, confirmed_at: null, last_time_step: null, created_at: now, updated_at: now })
        .onConflict((oc) =>
          oc.column('user_id').doUpdateSet({ secret_sealed: sealed, last_time_step: null, created_at: now, updated_at: now }).where('user_totp.confirmed_at', 'is', null),
        )
        .execute();
      return enrollmentMaterial(secret, username);
    },

    /** Confirms the pending enrollment with a code from the app; returns the recovery codes, shown once. */
    async confirm(context: RequestContext, code: string) {
      const { userId } = requireUser(context);
      const pending = await db.selectFrom('user_totp').select(['secret_sealed', 'confirmed_at']).where('user_id', '=', userId).executeTakeFirst();
      if (pending?.confirmed_at) throw conflict('multi-factor sign-in is already enabled');
      if (!pending) throw conflict('no enrollment in progress: start one with POST /api/v1/auth/mfa/totp/enroll');
      const secret = await openSecret(userId, pending.secret_sealed);
      if (!secret) throw conflict('the enrollment can no longer be read (the service secret changed): start again with POST /api/v1/auth/mfa/totp/enroll');
      const now = deps.clock.now();
      const step = await acceptedTimeStep(secret, code.replace(/\s/g, ''), now, null);
      if (step === null) {
        throw badRequest("the code does not match the authenticator: enter the 6-digit code the app shows now (check the phone's clock if it keeps failing)");
      }
      const codes = await db.transaction().execute(async (trx) => {
        const confirmed = await trx
          .updateTable('user_totp')
          .set({ confirmed_at: now, last_time_step: step, updated_at: now })
          .where('user_id', '=', userId)
          .where('secret_sealed', '=', pending.secret_sealed)
          .where('confirmed_at', 'is', null)
          .returning('user_id')
          .executeTakeFirst();
        if (!confirmed) return null;
        const fresh = await replaceRecoveryCodes(trx, userId, now);
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId: context.actor.tenantId,
          action: 'auth.mfa_enabled',
          targetType: 'user',
          targetId: userId,
          details: { method: 'totp', recovery_codes: fresh.length },
        });
        return fresh;
      });
      if (!codes) throw conflict('the enrollment changed meanwhile (enrolled again in another window): confirm the newest one');
      return { recovery_codes: codes, sign_in_again: context.actor.mfaEnrollmentRequired === true };
    },

    /** Turns multi-factor sign-in off with a current code; refused while a tenant of the user requires it. */
    async disable(context: RequestContext, code: string): Promise<void> {
      const { userId } = requireUser(context);
      if (await requiredForUser(context, userId)) {
        throw forbidden('your tenant requires multi-factor sign-in: it cannot be turned off');
      }
      await withSecondFactor(context, code, async (trx, _userId, factor) => {
        await trx.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
        await trx.deleteFrom('user_totp').where('user_id', '=', userId).execute();
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId: context.actor.tenantId,
          action: 'auth.mfa_disabled',
          targetType: 'user',
          targetId: userId,
          details: { method: 'totp', confirmed_with: factor },
        });
      });
    },

    /** New recovery codes (the old ones stop working), with a current code. */
    async regenerateRecoveryCodes(context: RequestContext, code: string) {
      const recovery_codes = await withSecondFactor(context, code, async (trx, userId, factor) => {
        const fresh = await replaceRecoveryCodes(trx, userId, deps.clock.now());
        await writeAudit(trx, deps.clock, actorOf(context), {
          tenantId: context.actor.tenantId,
          action: 'auth.mfa_recovery_codes_regenerated',
          targetType: 'user',
          targetId: userId,
          details: { recovery_codes: fresh.length, confirmed_with: factor },
        });
        return fresh;
      });
      return { recovery_codes };
    },

    async tenantSetting(tenantId: string) {
      const row = await db.selectFrom('tenants').select(['mfa_required']).where('id', '=', tenantId).executeTakeFirstOrThrow();
      return { mfa_required: row.mfa_required };
    },

    /**
     * The tenant's requirement. It applies at once: password-only sessions of users without an
     * authenticator are held to enrollment from their next request (the authenticator reads it).
     */
    async setTenantSetting(context: RequestContext, tenantId: string, required: boolean) {
      const previous = await this.tenantSetting(tenantId);
      if (required && !previous.mfa_required && context.actor.tenantId === tenantId && context.actor.sessionId) {
        // Otherwise the admin's own session would be held to enrollment by the change it just made.
        const own = await db.selectFrom('sessions').select(['password_only']).where('id', '=', context.actor.sessionId).executeTakeFirst();
        if (own?.password_only) {
          throw conflict(
            'this session was opened with a password alone and would be held to enrollment: enroll an authenticator ' +
              '(POST /api/v1/auth/mfa/totp/enroll) and sign in with its code first',
          );
        }
      }
      if (previous.mfa_required !== required) {
        await changeAccess(db, deps.authCache, async (trx) => {
          await trx.updateTable('tenants').set({ mfa_required: required, updated_at: deps.clock.now() }).where('id', '=', tenantId).execute();
          await writeAudit(trx, deps.clock, actorOf(context), {
            tenantId,
            action: 'tenant.mfa_required_changed',
            targetType: 'tenant',
            targetId: tenantId,
            details: { previous: previous.mfa_required, mfa_required: required },
          });
        });
      }
      return { mfa_required: required };
    },
  };
}

export type MfaService = ReturnType<typeof createMfaService>;
